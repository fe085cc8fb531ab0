"""Tests of the Python package (python/bloomkv), run by the test suite
(tests/CMakeLists.txt, python.test) against the library just built:

    BLOOMKV_LIBRARY=build/release/libbloomkv_py.so PYTHONPATH=python \\
        python3 -m unittest discover -s python/tests
"""

import os
import random
import re
import shutil
import tempfile
import threading
import time
import unittest

import bloomkv

HEADER = os.path.join(os.path.dirname(__file__), "..", "..", "include",
                      "bloomkv", "c.h")


class TempDir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="bloomkv-python-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


class BindingTest(unittest.TestCase):
    def test_every_function_of_the_header_is_declared(self):
        with open(HEADER) as f:
            header = f.read()
        header = re.sub(r"/\*.*?\*/", "", header, flags=re.S)
        declared = set(re.findall(r"\b(bloomkv_[a-z_0-9]+)\s*\(", header))
        self.assertGreater(len(declared), 80)
        for name in sorted(declared):
            self.assertTrue(hasattr(bloomkv._lib, name), name)

    def test_version(self):
        self.assertRegex(bloomkv.version(), r"^\d+\.\d+\.\d+$")


class DBTest(TempDir):
    def test_put_get_delete_bytes_and_str(self):
        with bloomkv.DB(self.path("db"), create_if_missing=True) as db:
            db.put(b"aZ3kQ9x", b"https://example.com/a")
            db["str-key"] = "caf\u00e9"
            db.put(b"\x00bin\xff", b"\x00\x01\x02")
            self.assertEqual(db.get(b"aZ3kQ9x"), b"https://example.com/a")
            self.assertEqual(db[b"str-key"], "caf\u00e9".encode())
            self.assertEqual(db.get(b"\x00bin\xff"), b"\x00\x01\x02")
            self.assertIsNone(db.get(b"never-issued"))
            self.assertEqual(db.get(b"never-issued", b"dflt"), b"dflt")
            self.assertIn(b"aZ3kQ9x", db)
            with self.assertRaises(KeyError):
                db[b"never-issued"]
            del db[b"aZ3kQ9x"]
            self.assertNotIn(b"aZ3kQ9x", db)
            db.put(b"empty", b"")
            self.assertEqual(db.get(b"empty"), b"")

    def test_memory_limit_pages_filters_and_indexes(self):
        # One byte: every segment's index and filter stay in the file.
        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        filter_and_index_memory_limit=1) as db:
            for i in range(500):
                db.put(f"code{i:05d}", f"https://example.com/{i}")
            db.flush()
            usage = db.get_property("bloomkv.resource-usage")
            self.assertIn("filter_and_index_memory_limit: 1\n", usage)
            self.assertIn("filter_bytes: 0\n", usage)
            self.assertNotIn("paged_filters: 0\n", usage)
            for i in range(0, 500, 7):
                self.assertEqual(db.get(f"code{i:05d}"),
                                 f"https://example.com/{i}".encode())
                self.assertIsNone(db.get(f"code{i:05d}x"))

    def test_errors_are_exceptions_with_the_status(self):
        with self.assertRaises(bloomkv.InvalidArgumentError) as e:
            bloomkv.DB(self.path("missing"))
        self.assertIn("does not exist", str(e.exception))
        with bloomkv.DB(self.path("db"), create_if_missing=True) as db:
            with self.assertRaises(bloomkv.InvalidArgumentError):
                db.put(b"", b"x")  # empty key
            with self.assertRaises(TypeError):
                db.put(42, b"x")
            with self.assertRaises(bloomkv.BusyError):
                bloomkv.DB(self.path("db"))
        with self.assertRaises(TypeError):
            bloomkv.DB(self.path("db"), no_such_option=1)
        db = bloomkv.DB(self.path("db"))
        db.close()
        with self.assertRaises(bloomkv.Error):
            db.get(b"k")

    def test_batches_snapshots_iterators(self):
        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        write_buffer_size=64 << 10,
                        deep_fuse_filter=(8, 1), compression="lz4") as db:
            with db.write_batch() as batch:
                for i in range(3000):
                    batch.put(f"key{i:05d}", f"value{i}")
                self.assertEqual(len(batch), 3000)
            # A batch whose block raises is not written.
            with self.assertRaises(RuntimeError):
                with db.write_batch() as batch:
                    batch.put(b"never", b"written")
                    raise RuntimeError("abandon")
            self.assertIsNone(db.get(b"never"))

            with db.snapshot() as snap:
                db.delete(b"key00001")
                self.assertEqual(db.get(b"key00001", snapshot=snap),
                                 b"value1")
                self.assertIsNone(db.get(b"key00001"))
            db.flush()
            db.compact_range()
            keys = list(db.keys())
            self.assertEqual(len(keys), 2999)
            self.assertEqual(keys, sorted(keys))
            window = list(db.items(start=b"key00010", stop=b"key00013"))
            self.assertEqual(window, [(b"key00010", b"value10"),
                                      (b"key00011", b"value11"),
                                      (b"key00012", b"value12")])
            back = [k for k, _ in db.items(start=b"key00010",
                                           stop=b"key00013", reverse=True)]
            self.assertEqual(back, [b"key00012", b"key00011", b"key00010"])
            got = db.multi_get([b"key00007", b"missing", b"key02999"])
            self.assertEqual(got, [b"value7", None, b"value2999"])
            self.assertGreater(db.approximate_size(b"key", b"key99999"),
                               3000)
            self.assertEqual(db.approximate_size(b"x", b"z"), 0)
            self.assertIn("level", db.get_property("bloomkv.levels"))
            self.assertIsNone(db.get_property("bloomkv.nonexistent"))
            db.sync_wal()
            db.checkpoint(self.path("copy"))
        with bloomkv.DB(self.path("copy"), read_only=True) as copy:
            self.assertEqual(copy.get(b"key02000"), b"value2000")
            with self.assertRaises(bloomkv.Error):
                copy.put(b"k", b"v")
        bloomkv.repair_db(self.path("db"))
        bloomkv.destroy_db(self.path("db"))
        with self.assertRaises(bloomkv.Error):
            bloomkv.DB(self.path("db"))

    def test_delete_range(self):
        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        write_buffer_size=64 << 10) as db:
            for i in range(1000):
                db.put(f"code{i:04d}", f"https://example.com/{i}")
            with db.snapshot() as snap:
                db.delete_range(b"code0100", b"code0200")
                self.assertIsNone(db.get(b"code0150"))
                self.assertEqual(db.get(b"code0150", snapshot=snap),
                                 b"https://example.com/150")
                self.assertEqual(db.get(b"code0200"),
                                 b"https://example.com/200")
            with db.write_batch() as batch:
                batch.delete_range("code0900", "code1000")
                batch.put("code0950", "kept")
            db.flush()
            db.compact_range()
            keys = list(db.keys())
            self.assertEqual(len(keys), 1000 - 100 - 100 + 1)
            self.assertEqual(db.get(b"code0950"), b"kept")
            self.assertEqual(
                db.get_property("bloomkv.num-range-tombstones"), "0")
            with self.assertRaises(ValueError):
                db.delete_range(b"z", b"a")
            self.assertEqual(db.get(b"code0500"), b"https://example.com/500")

    def test_close_ends_open_iterators_and_snapshots(self):
        db = bloomkv.DB(self.path("db"), create_if_missing=True)
        for i in range(100):
            db.put(f"k{i:03d}", b"v")
        walk = db.items()
        self.assertEqual(next(walk)[0], b"k000")
        snap = db.snapshot()
        db.close()  # must not crash, nor leave the iterator usable
        with self.assertRaises(bloomkv.Error):
            next(walk)
        snap.release()  # already released by close: a no-op
        db.close()      # twice is fine

    def test_random_binary_round_trip_against_a_dict(self):
        seed = int(os.environ.get("BLOOMKV_TEST_SEED", "301"))
        rng = random.Random(seed)
        model = {}
        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        write_buffer_size=64 << 10) as db:
            for _ in range(5000):
                key = bytes(rng.randrange(256)
                            for _ in range(rng.randrange(1, 12)))
                if rng.random() < 0.2 and model:
                    key = rng.choice(sorted(model))
                    db.delete(key)
                    del model[key]
                else:
                    value = bytes(rng.randrange(256)
                                  for _ in range(rng.randrange(0, 40)))
                    db.put(key, value)
                    model[key] = value
            self.assertEqual(dict(db.items()), model, f"seed={seed}")

    def test_every_compression_reads_back(self):
        for compression in ("none", "lz4", "zstd", "lz4-values"):
            path = self.path("db-" + compression)
            with bloomkv.DB(path, create_if_missing=True,
                            write_buffer_size=64 << 10,
                            compression=compression) as db:
                for i in range(3000):
                    db.put(f"code{i:05d}", f"https://example.com/{i}/{i * 7}")
                db.compact_range()
            with bloomkv.DB(path, compression="none") as db:
                self.assertEqual(db.get(b"code01234"),
                                 b"https://example.com/1234/8638", compression)
                self.assertEqual(len(list(db.keys())), 3000, compression)
        with self.assertRaises(bloomkv.InvalidArgumentError):
            bloomkv.DB(self.path("db-bad"), create_if_missing=True,
                       compression="snappy")

    def test_mmap_reads_maps_segment_files_or_not(self):
        def maps_a_segment():
            with open("/proc/self/maps") as f:
                return any(line.rstrip().endswith(".seg") for line in f)

        for mapped in (True, False):
            path = self.path(f"db-mmap-{mapped}")
            with bloomkv.DB(path, create_if_missing=True,
                            block_cache_capacity=0, mmap_reads=mapped) as db:
                db.put(b"code1", b"https://example.com/1")
                db.flush()
                self.assertEqual(db.get(b"code1"), b"https://example.com/1")
                self.assertEqual(maps_a_segment(), mapped)

    def test_compaction_shape_options(self):
        # Level 0 keeps as many segments as level0_compaction_trigger
        # allows, lookups that consult it in vain included once
        # read_triggered_compaction is off; the level targets follow the
        # other three options.
        def wait_for_background_work(db):
            deadline = time.monotonic() + 30
            while db.get_property("bloomkv.compaction-pending") != "0":
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)

        def level_target(db, level):
            for line in db.get_property("bloomkv.levels").splitlines():
                fields = line.split()
                if fields[0] == f"L{level}":
                    return int(fields[4])
            return None

        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        level0_compaction_trigger=8,
                        read_triggered_compaction=False,
                        level_compaction_dynamic_level_bytes=False,
                        max_bytes_for_level_base=1 << 20,
                        max_bytes_for_level_multiplier=4) as db:
            # Six flushes of interleaved keys: six level-0 segments over one
            # key range, more than the default trigger (4) lets stay.
            for flush in range(6):
                for i in range(flush, 600, 6):
                    db.put(f"code{i:05d}", b"https://example.com/")
                db.flush()
            # 2^17 lookups of absent keys inside that range, each consulting
            # every level-0 segment in vain: with read_triggered_compaction
            # on, the check every 65,536 lookups would compact level 0.
            absent = [f"code{i % 600:05d}x" for i in range(1 << 17)]
            self.assertEqual(db.multi_get(absent), [None] * len(absent))
            wait_for_background_work(db)
            self.assertEqual(
                db.get_property("bloomkv.num-files-at-level0"), "6")
            # Top-down targets: level 1 at the base, each level 4 times the
            # one above.
            self.assertEqual(level_target(db, 1), 1 << 20)
            self.assertEqual(level_target(db, 2), 4 << 20)

    def test_invalid_compaction_shape_is_rejected(self):
        cases = [
            (dict(level0_compaction_trigger=8,
                  level0_slowdown_writes_trigger=6), "level-0 triggers"),
            # Below the default slowdown trigger (20).
            (dict(level0_stop_writes_trigger=10), "level-0 triggers"),
            (dict(max_bytes_for_level_base=1000),
             "max_bytes_for_level_base must be"),
            (dict(max_bytes_for_level_multiplier=1),
             "max_bytes_for_level_multiplier must be"),
        ]
        for options, reason in cases:
            with self.assertRaises(bloomkv.InvalidArgumentError,
                                   msg=options) as e:
                bloomkv.DB(self.path("db"), create_if_missing=True,
                           **options).close()
            self.assertIn(reason, str(e.exception))

    def test_answer_cache_option(self):
        # The keyword reaches the database: its slots show in the resource
        # usage, reads through it return what was written, and a capacity
        # under two slots is rejected with its reason.
        with bloomkv.DB(self.path("db"), create_if_missing=True,
                        answer_cache_capacity=64 << 10) as db:
            usage = db.get_property("bloomkv.resource-usage")
            self.assertIn("answer_cache_bytes: 65536\n", usage)
            db.put("aZ3kQ9x", b"https://example.com/a")
            db.flush()
            for _ in range(3):
                self.assertEqual(b"https://example.com/a", db.get("aZ3kQ9x"))
        with self.assertRaises(bloomkv.InvalidArgumentError) as e:
            bloomkv.DB(self.path("db2"), create_if_missing=True,
                       answer_cache_capacity=100).close()
        self.assertIn("answer_cache_capacity must be", str(e.exception))


class FilterTest(unittest.TestCase):
    def test_the_articles_bloom_demo(self):
        # bloom_demo.py's checks: no false negatives, about 1% false
        # positives at 1,000 links and p = 0.01.
        bf = bloomkv.BloomFilter(1000, 0.01)
        for i in range(1000):
            bf.add(f"link:{i}")
        self.assertTrue(all(bf.contains(f"link:{i}") for i in range(1000)))
        false_positives = sum(bf.contains(f"missing:{i}")
                              for i in range(5000))
        self.assertLess(false_positives, 5000 * 0.03)

    def test_bloom_merge_estimate_serialize(self):
        a = bloomkv.BloomFilter(10000, 0.01)
        b = bloomkv.BloomFilter(10000, 0.01)
        for i in range(4000):
            (a if i % 2 else b).put(f"k{i}")
        a.put_all(b)
        self.assertTrue(all(f"k{i}" in a for i in range(4000)))
        self.assertAlmostEqual(a.approximate_element_count(), 4000,
                               delta=400)
        c = bloomkv.BloomFilter.from_bytes(a.to_bytes())
        self.assertIn("k17", c)
        damaged = bytearray(a.to_bytes())
        damaged[len(damaged) // 2] ^= 0x40
        with self.assertRaises(bloomkv.CorruptionError):
            bloomkv.BloomFilter.from_bytes(bytes(damaged))
        with self.assertRaises(bloomkv.Error):
            a.merge(bloomkv.BloomFilter(10, 0.01))
        with self.assertRaises(bloomkv.InvalidArgumentError):
            bloomkv.BloomFilter(0, 0.01)

    def test_concurrent_adds_lose_nothing(self):
        f = bloomkv.BloomFilter(40000, 0.01)

        def add(part):
            for i in range(part, 40000, 4):
                f.add_concurrently(f"c{i}")

        threads = [threading.Thread(target=add, args=(p,)) for p in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(all(f"c{i}" in f for i in range(40000)))

    def test_scalable_cuckoo_static(self):
        s = bloomkv.ScalableBloomFilter(100, 0.01)
        self.assertTrue(s.add("x"))
        self.assertFalse(s.add("x"))
        for i in range(2000):
            s.add(f"s{i}")
        self.assertTrue(all(f"s{i}" in s for i in range(2000)))
        self.assertIn("s1999", bloomkv.ScalableBloomFilter.from_bytes(
            s.to_bytes()))
        fixed = bloomkv.ScalableBloomFilter(5, 0.01, non_scaling=True)
        with self.assertRaises(bloomkv.FullError):
            for i in range(100):
                fixed.add(f"f{i}")

        c = bloomkv.CuckooFilter(1000, 0.01)
        c.add("a")
        c.add("a")
        self.assertEqual(c.count("a"), 2)
        self.assertFalse(c.add_if_absent("a"))
        self.assertTrue(c.delete("a"))
        self.assertEqual(c.count("a"), 1)
        self.assertEqual(bloomkv.CuckooFilter.from_bytes(c.to_bytes())
                         .count("a"), 1)
        full = bloomkv.CuckooFilter(10, 0.01)
        with self.assertRaises(bloomkv.FullError):
            for i in range(10000):
                full.add(f"k{i}")

        keys = [f"fuse{i}" for i in range(1000)]
        st = bloomkv.StaticFilter(keys)
        self.assertTrue(all(k in st for k in keys))
        self.assertTrue(all(k in bloomkv.StaticFilter.from_bytes(
            st.to_bytes()) for k in keys[:10]))
        with self.assertRaises(bloomkv.Error):
            bloomkv.StaticFilter.from_bytes(st.to_bytes()[:10])


if __name__ == "__main__":
    unittest.main()
