"""The Python article's bloom_demo.py (seeds: "用 Python 位数组实现布隆过滤器
拦截不存在的短链 ID") with bloomkv.BloomFilter in place of the hand-written
bit array: 1,000 links at p = 0.01, every link found, and the measured
false-positive rate over 5,000 made-up ones beside the estimate.

    PYTHONPATH=python BLOOMKV_LIBRARY=build/release/libbloomkv_py.so \\
        python3 python/examples/bloom_demo.py
"""

import bloomkv


def demo():
    n = 1000
    p = 0.01
    bf = bloomkv.BloomFilter(n, p)

    for i in range(n):
        bf.add(f"link:{i}")

    assert all(bf.contains(f"link:{i}") for i in range(n))

    trials = 5000
    false_positive = sum(bf.contains(f"missing:{i}") for i in range(trials))
    print(f"bloomkv {bloomkv.version()}: {n} links, target rate {p}, "
          f"estimated distinct items {bf.approximate_element_count():.0f}, "
          f"measured false-positive rate {false_positive / trials:.4f}")


if __name__ == "__main__":
    demo()
