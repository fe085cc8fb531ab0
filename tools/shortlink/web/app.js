// shortlinkd's page: shortens a URL with POST /api/links and shows a link's
// stats from GET /api/links/{code}. Plain DOM, no dependencies; every value
// from the server is inserted as text, never as HTML.
"use strict";

(function () {
  const API_KEY_STORAGE = "shortlinkd.apiKey";

  const $ = (id) => document.getElementById(id);

  function storedApiKey() {
    try {
      return window.localStorage.getItem(API_KEY_STORAGE) || "";
    } catch (e) {
      return "";  // storage disabled: the key lives in the field only
    }
  }

  function storeApiKey(key) {
    try {
      if (key) {
        window.localStorage.setItem(API_KEY_STORAGE, key);
      } else {
        window.localStorage.removeItem(API_KEY_STORAGE);
      }
    } catch (e) {
      // Nothing to do: the field still holds it for this page.
    }
  }

  function showApiKeyField() {
    $("api-key-field").hidden = false;
  }

  // Calls the API; resolves to {status, body} with body the parsed JSON (or
  // null), rejects with an Error whose message is for the user.
  async function api(method, path, payload) {
    const headers = {Accept: "application/json"};
    const key = $("api-key").value.trim();
    if (key) headers.Authorization = "Bearer " + key;
    const init = {method, headers};
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(payload);
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      throw new Error("The server cannot be reached.");
    }
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    if (!res.ok) {
      let message = body && typeof body.error === "string"
          ? body.error : "The server answered " + res.status + ".";
      if (res.status === 429) {
        const wait = res.headers.get("Retry-After");
        if (wait) message += " Try again in " + wait + " s.";
      }
      const err = new Error(message);
      err.status = res.status;
      throw err;
    }
    return {status: res.status, body};
  }

  function showError(id, message) {
    const el = $(id);
    el.textContent = message;
    el.hidden = !message;
  }

  function formatTime(unix) {
    if (typeof unix !== "number") return "—";
    return new Date(unix * 1000).toISOString().replace(".000Z", " UTC")
        .replace("T", " ");
  }

  function addRow(dl, term, value) {
    const dt = document.createElement("dt");
    dt.textContent = term;
    const dd = document.createElement("dd");
    if (value instanceof Node) {
      dd.appendChild(value);
    } else {
      dd.textContent = value;
    }
    dl.append(dt, dd);
  }

  // The clicks part of a link, or a note that the server does not count.
  function renderClicks(container, clicks) {
    if (!clicks || typeof clicks.total !== "number") {
      const p = document.createElement("p");
      p.className = "hint clicks-unavailable";
      p.textContent = "Click counts are not available on this server.";
      container.appendChild(p);
      return;
    }
    const dl = document.createElement("dl");
    const total = document.createElement("span");
    total.className = "clicks-total";
    total.textContent = String(clicks.total);
    addRow(dl, "Clicks", total);
    addRow(dl, "Last click",
           clicks.last_access == null ? "never" : formatTime(clicks.last_access));
    container.appendChild(dl);
    const daily = Array.isArray(clicks.daily) ? clicks.daily : [];
    if (daily.length === 0) return;
    const table = document.createElement("table");
    const caption = document.createElement("caption");
    caption.textContent = "Clicks per day (UTC), last 30 days";
    table.appendChild(caption);
    const head = table.insertRow();
    for (const name of ["Day", "Clicks", ""]) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      head.appendChild(th);
    }
    const max = Math.max(1, ...daily.map((d) => Number(d.count) || 0));
    for (const d of daily) {
      const row = table.insertRow();
      row.insertCell().textContent = String(d.day);
      row.insertCell().textContent = String(d.count);
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = Math.round((Number(d.count) || 0) / max * 10) + "rem";
      bar.setAttribute("aria-hidden", "true");
      row.insertCell().appendChild(bar);
    }
    container.appendChild(table);
  }

  function renderLink(container, link) {
    container.replaceChildren();
    const dl = document.createElement("dl");
    const a = document.createElement("a");
    a.href = link.url;
    a.rel = "noopener noreferrer";
    a.textContent = link.url;
    addRow(dl, "Code", String(link.code));
    addRow(dl, "Goes to", a);
    addRow(dl, "Created", formatTime(link.created));
    addRow(dl, "Expires",
           link.expires_at == null ? "never" : formatTime(link.expires_at));
    container.appendChild(dl);
    renderClicks(container, link.clicks);
  }

  let currentCode = null;

  async function refreshResult() {
    if (!currentCode) return;
    try {
      const {body} = await api("GET", "/api/links/" +
                               encodeURIComponent(currentCode));
      renderLink($("result-details"), body);
      showError("shorten-error", "");
    } catch (e) {
      showError("shorten-error", e.message);
    }
  }

  async function onShorten(event) {
    event.preventDefault();
    showError("shorten-error", "");
    const url = $("url").value.trim();
    if (!url) {
      showError("shorten-error", "Enter the URL to shorten.");
      $("url").focus();
      return;
    }
    const payload = {url};
    const alias = $("alias").value.trim();
    if (alias) payload.alias = alias;
    const ttl = $("ttl").value;
    if (ttl) payload.ttl_seconds = Number(ttl);
    const button = $("shorten");
    button.disabled = true;
    try {
      const {body} = await api("POST", "/api/links", payload);
      storeApiKey($("api-key").value.trim());
      currentCode = body.code;
      const link = $("short-url");
      link.href = body.short_url;
      link.textContent = body.short_url;
      $("copy-status").textContent = "";
      renderLink($("result-details"), body);
      $("result").hidden = false;
      refreshResult();  // fills in the clicks where the server counts them
    } catch (e) {
      if (e.status === 401) {
        showApiKeyField();
        $("api-key").focus();
      }
      showError("shorten-error", e.message);
    } finally {
      button.disabled = false;
    }
  }

  // Clipboard API where the page is a secure context, else the selection
  // and execCommand, else the link is selected for the user to copy.
  async function onCopy() {
    const text = $("short-url").textContent;
    const status = $("copy-status");
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        status.textContent = "Copied.";
        return;
      }
    } catch (e) {
      // Permission refused: fall back below.
    }
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (e) {
      copied = false;
    }
    area.remove();
    if (copied) {
      status.textContent = "Copied.";
    } else {
      const range = document.createRange();
      range.selectNodeContents($("short-url"));
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      status.textContent = "Press Ctrl+C (⌘C) to copy.";
    }
  }

  // Accepts a bare code or a whole short link.
  function codeFromInput(value) {
    const path = value.trim().replace(/[?#].*$/, "").replace(/\/+$/, "");
    return path.slice(path.lastIndexOf("/") + 1);
  }

  async function onLookup(event) {
    event.preventDefault();
    showError("lookup-error", "");
    const details = $("lookup-details");
    details.replaceChildren();
    const code = codeFromInput($("code").value);
    if (!code) {
      showError("lookup-error", "Enter a short code.");
      $("code").focus();
      return;
    }
    const button = $("lookup");
    button.disabled = true;
    try {
      const {body} = await api("GET", "/api/links/" + encodeURIComponent(code));
      renderLink(details, body);
    } catch (e) {
      showError("lookup-error", e.message);
    } finally {
      button.disabled = false;
    }
  }

  function init() {
    const key = storedApiKey();
    if (key) {
      $("api-key").value = key;
      showApiKeyField();
    }
    $("shorten-form").addEventListener("submit", onShorten);
    $("lookup-form").addEventListener("submit", onLookup);
    $("copy").addEventListener("click", onCopy);
    $("refresh").addEventListener("click", refreshResult);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
