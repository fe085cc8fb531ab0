// Drives shortlinkd's web page in headless Chromium (puppeteer-core) and
// checks what a user sees: scripts/web-test.sh starts the server and runs
//   node scripts/web-test.cjs <base url>
// with CHROMIUM set to the browser binary. Exits 1 at the first failed
// check, printing what was expected; every console error, page error or CSP
// violation also fails the run.
"use strict";

const http = require("http");
const puppeteer = require("puppeteer-core");

const base = process.argv[2];
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const problems = [];
let step = "start";

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// One request without following redirects: {status, headers, body}.
function request(method, url) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {method}, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({status: res.statusCode, headers: res.headers, body}));
    });
    req.on("error", reject);
    req.end();
  });
}

async function visibleText(page, selector) {
  await page.waitForFunction(
      (s) => {
        const el = document.querySelector(s);
        return el && !el.hidden && el.offsetParent !== null &&
            el.textContent.trim() !== "";
      },
      {timeout: 10000}, selector);
  return page.$eval(selector, (el) => el.textContent.trim());
}

async function main() {
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
  try {
    const context = browser.defaultBrowserContext();
    await context.overridePermissions(base, ["clipboard-read", "clipboard-write",
                                             "clipboard-sanitized-write"]);
    const page = await browser.newPage();
    page.on("console", (msg) => {
      // Chromium logs every answer >= 400 to fetch; the page shows those.
      if (msg.type() === "error" &&
          !msg.text().startsWith("Failed to load resource: the server responded")) {
        problems.push(`console error (${step}): ${msg.text()}`);
      }
    });
    page.on("pageerror", (err) => problems.push(`page error (${step}): ${err.message}`));
    page.on("requestfailed", (req) =>
      problems.push(`request failed (${step}): ${req.url()} ${req.failure().errorText}`));
    const authHeaders = [];
    page.on("request", (req) => {
      if (req.method() === "POST") authHeaders.push(req.headers().authorization || "");
    });

    step = "load the page";
    const res = await page.goto(base + "/", {waitUntil: "networkidle0"});
    check(res.status() === 200, `GET / answered ${res.status()}`);
    check(/default-src 'self'/.test(res.headers()["content-security-policy"] || ""),
          "no Content-Security-Policy on the page");
    check((await page.title()) === "shortlinkd", "wrong title");
    const unlabelled = await page.$$eval("input, select",
        (els) => els.filter((e) => e.labels.length === 0).map((e) => e.id));
    check(unlabelled.length === 0, `inputs without a label: ${unlabelled}`);

    step = "shorten a URL with the keyboard";
    const target = `https://example.com/web-test/${Date.now()}?q=1`;
    await page.focus("#url");
    await page.keyboard.type(target);
    await page.select("#ttl", "86400");
    await page.keyboard.press("Enter");  // submits the form from the field
    const shortUrl = await visibleText(page, "#short-url");
    check(/^http:\/\/127\.0\.0\.1:\d+\/[0-9A-Za-z]{7}$/.test(shortUrl),
          `short link looks wrong: ${shortUrl}`);
    const code = shortUrl.slice(shortUrl.lastIndexOf("/") + 1);
    const details = await visibleText(page, "#result-details");
    check(details.includes(target), "the result does not show the long URL");
    check(!details.includes("Expiresnever"), "the TTL was not applied");
    console.log(`shortened ${target} -> ${shortUrl}`);

    step = "copy the short link";
    await page.click("#copy");
    const copyStatus = await visibleText(page, "#copy-status");
    check(copyStatus === "Copied.", `copy said: ${copyStatus}`);
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    check(clip === shortUrl, `clipboard holds ${clip}`);

    step = "follow the short link";
    const redirect = await request("GET", shortUrl);
    check(redirect.status === 302, `GET ${shortUrl} answered ${redirect.status}`);
    check(redirect.headers.location === target,
          `redirect to ${redirect.headers.location}`);

    step = "see the clicks";
    const info = JSON.parse((await request("GET", `${base}/api/links/${code}`)).body);
    if (info.clicks && typeof info.clicks.total === "number") {
      // Clicks may be counted a little later than the redirect: refresh
      // until the page shows it, for at most 10 s.
      let shown = "";
      for (const deadline = Date.now() + 10000; Date.now() < deadline;) {
        await page.click("#refresh");
        await new Promise((r) => setTimeout(r, 250));
        shown = await page.$eval("#result-details",
            (d) => (d.querySelector(".clicks-total") || {}).textContent || "");
        if (Number(shown) >= 1) break;
      }
      check(Number(shown) >= 1, `clicks shown: "${shown}", expected 1`);
      const days = await page.$$eval("#result-details table tr", (rows) => rows.length);
      check(days >= 2, "no row of clicks per day");
      console.log(`clicks shown: ${shown}`);
    } else {
      await page.click("#refresh");
      await visibleText(page, "#result-details .clicks-unavailable");
      console.log("clicks: this server does not count them yet; the page says so");
    }

    step = "look a code up";
    await page.focus("#code");
    await page.keyboard.type(shortUrl);  // a whole short link is accepted too
    await page.keyboard.press("Enter");
    const lookup = await visibleText(page, "#lookup-details");
    check(lookup.includes(code) && lookup.includes(target),
          `lookup shows: ${lookup}`);

    step = "unknown code";
    await page.$eval("#code", (el) => (el.value = ""));
    await page.type("#code", "zzzzzzz");
    await page.click("#lookup");
    const lookupError = await visibleText(page, "#lookup-error");
    check(lookupError === "no such link", `lookup error: ${lookupError}`);

    step = "bad URL";
    await page.$eval("#url", (el) => (el.value = ""));
    await page.type("#url", "javascript:alert(1)");
    await page.click("#shorten");
    const badUrl = await visibleText(page, "#shorten-error");
    const apiError = JSON.parse((await new Promise((resolve, reject) => {
      const req = http.request(`${base}/api/links`, {
        method: "POST", headers: {"Content-Type": "application/json"}}, (r) => {
        let b = "";
        r.on("data", (d) => (b += d));
        r.on("end", () => resolve(b));
      });
      req.on("error", reject);
      req.end(JSON.stringify({url: "javascript:alert(1)"}));
    }))).error;
    check(badUrl === apiError, `page shows "${badUrl}", the API says "${apiError}"`);
    check((await page.$eval("#shorten-error", (e) => e.getAttribute("role"))) === "alert",
          "the error is not announced");

    step = "API key kept in localStorage";
    await page.evaluate(() => localStorage.setItem("shortlinkd.apiKey", "key-123"));
    await page.reload({waitUntil: "networkidle0"});
    check(await page.$eval("#api-key-field", (e) => !e.hidden), "API key field hidden");
    check((await page.$eval("#api-key", (e) => e.value)) === "key-123",
          "the stored key is not filled in");
    authHeaders.length = 0;
    await page.type("#url", "https://example.com/with-key");
    await page.click("#shorten");
    await visibleText(page, "#short-url");
    check(authHeaders.includes("Bearer key-123"),
          `create sent Authorization: ${JSON.stringify(authHeaders)}`);
    await page.evaluate(() => localStorage.clear());

    check(problems.length === 0, problems.join("\n"));
    console.log("web test passed");
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  console.error(`web test FAILED at "${step}": ${err.message}`);
  if (problems.length) console.error(problems.join("\n"));
  process.exit(1);
});
