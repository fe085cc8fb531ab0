// SkipList: the sorted, insert-only index behind the memtable.
//
// Nodes live in an Arena and are never removed, so a node reachable by a
// reader stays valid for as long as the list exists.
//
// Thread-safety: Insert() requires external synchronization (one writer at a
// time). Readers (Contains() and Iterators) need no lock and may run
// concurrently with the writer; they see every insert that completed before
// they started, and possibly some of the ones running meanwhile. The list and
// its arena must outlive every reader.
//
// Why readers are safe without a lock: a new node is fully built (key and
// all of its links) before it becomes reachable, and it is made reachable one
// level at a time from the bottom up with release stores, which readers
// follow with acquire loads. So any reader that reaches a node sees its key
// and its links. The list height is a hint only: a reader that sees a new,
// larger height before the node that caused it finds null links in the head
// at those levels and simply descends.
//
// Key is a small trivially copyable value (the memtable uses a pointer into
// the arena). Comparator is `int operator()(const Key&, const Key&) const`
// returning <0, 0, >0, and must be callable concurrently.
#ifndef BLOOMKV_DB_SKIPLIST_H_
#define BLOOMKV_DB_SKIPLIST_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <random>
#include <type_traits>

#include "util/arena.h"

namespace bloomkv {

template <typename Key, class Comparator>
class SkipList {
 private:
  struct Node;

 public:
  static constexpr int kMaxHeight = 12;
  // Each level holds about 1/kBranching of the nodes of the level below.
  static constexpr uint32_t kBranching = 4;

  // Allocates nodes from *arena, which must outlive the list. The seed fixes
  // the sequence of node heights, so a test can reproduce a list's shape.
  SkipList(Comparator cmp, Arena* arena, uint32_t seed = 0xdeadbeef);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // REQUIRES: no key comparing equal to `key` is in the list; external
  // synchronization with other Insert() calls.
  void Insert(const Key& key);

  // Insert() of a key that points at `key_bytes` bytes which build(char*)
  // writes, allocated in one piece with the node, right after its links:
  // a search that reaches the node then finds the key in the same or the
  // next cache line, instead of one more cache miss somewhere else in the
  // arena. Only for lists whose Key is a pointer to such bytes.
  // REQUIRES: as for Insert(), for the key build writes.
  template <typename Build>
  void InsertInline(size_t key_bytes, Build&& build)
    requires std::is_same_v<Key, const char*>;

  bool Contains(const Key& key) const;

  // True while no insert has been published: one load, for readers that
  // would otherwise search an empty list.
  bool Empty() const { return head_->Next(0) == nullptr; }

  // Iterates over the list as it is while the iterator moves: entries
  // inserted concurrently may or may not be seen. Initially not Valid().
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}

    bool Valid() const { return node_ != nullptr; }
    // REQUIRES: Valid()
    const Key& key() const {
      assert(Valid());
      return node_->key;
    }
    // REQUIRES: Valid()
    void Next() {
      assert(Valid());
      node_ = node_->Next(0);
    }
    // There are no back links: Prev searches from the head, in O(log n).
    // REQUIRES: Valid()
    void Prev() {
      assert(Valid());
      node_ = list_->NullIfHead(list_->FindLessThan(node_->key));
    }
    // First entry >= target.
    void Seek(const Key& target) {
      node_ = list_->FindGreaterOrEqual(target, nullptr);
    }
    // Last entry <= target.
    void SeekForPrev(const Key& target) {
      node_ = list_->NullIfHead(list_->FindLessOrEqual(target));
    }
    // Last entry < target.
    void SeekBefore(const Key& target) {
      node_ = list_->NullIfHead(list_->FindLessThan(target));
    }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() { node_ = list_->NullIfHead(list_->FindLast()); }

   private:
    const SkipList* list_;
    Node* node_;
  };

 private:
  static_assert(std::is_trivially_destructible_v<Key>,
                "the arena never runs destructors");

  int GetMaxHeight() const {
    return max_height_.load(std::memory_order_relaxed);
  }
  bool Equal(const Key& a, const Key& b) const { return compare_(a, b) == 0; }
  // True if `key` sorts after node n (a null node is past the end).
  bool KeyIsAfterNode(const Key& key, Node* n) const {
    return n != nullptr && compare_(n->key, key) < 0;
  }
  Node* NullIfHead(Node* n) const { return n == head_ ? nullptr : n; }

  // A node of `height` links with `extra` bytes of storage after them.
  Node* NewNode(const Key& key, int height, size_t extra = 0);
  // Links x, of the given height, in where its key belongs.
  void InsertNode(Node* x, int height);
  int RandomHeight();
  // First node >= key, or nullptr. If prev is not null, fills prev[level]
  // with the last node < key at every level below GetMaxHeight().
  Node* FindGreaterOrEqual(const Key& key, Node** prev) const;
  // Last node < key, or head_ if there is none.
  Node* FindLessThan(const Key& key) const;
  // Last node <= key, or head_ if there is none.
  Node* FindLessOrEqual(const Key& key) const;
  // Last node, or head_ if the list is empty.
  Node* FindLast() const;

  const Comparator compare_;
  Arena* const arena_;
  Node* const head_;
  // Written only by the writer; readers may see a stale value (see top).
  std::atomic<int> max_height_;
  std::minstd_rand rnd_;
};

// A node is this header followed by `height` atomic links, in one arena
// allocation; the links are addressed past the header rather than through a
// declared one-element array, so no access is out of a declared bound.
template <typename Key, class Comparator>
struct SkipList<Key, Comparator>::Node {
  using Link = std::atomic<Node*>;

  explicit Node(const Key& k) : key(k) {}

  // Set once, before the node is reachable (InsertInline builds the key
  // after the node's memory is allocated).
  Key key;

  Link* links() {
    return std::launder(
        reinterpret_cast<Link*>(reinterpret_cast<char*>(this) + LinksOffset()));
  }
  // Acquire: whoever follows a link sees the node it points to fully built.
  Node* Next(int n) {
    assert(n >= 0);
    return links()[n].load(std::memory_order_acquire);
  }
  // Release: publishes the node (and everything written before) to readers.
  void SetNext(int n, Node* x) {
    assert(n >= 0);
    links()[n].store(x, std::memory_order_release);
  }
  // For links of a node no reader can reach yet, and for the writer's own
  // reads of links only it ever changes.
  Node* NoBarrierNext(int n) {
    return links()[n].load(std::memory_order_relaxed);
  }
  void NoBarrierSetNext(int n, Node* x) {
    links()[n].store(x, std::memory_order_relaxed);
  }

  static constexpr size_t LinksOffset() {
    return (sizeof(Node) + alignof(Link) - 1) / alignof(Link) * alignof(Link);
  }
  static constexpr size_t Alignment() {
    return alignof(Node) > alignof(Link) ? alignof(Node) : alignof(Link);
  }
};

template <typename Key, class Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::NewNode(
    const Key& key, int height, size_t extra) {
  static_assert(Node::Alignment() <= Arena::kMaxAlignment);
  char* mem = arena_->AllocateAligned(
      Node::LinksOffset() + sizeof(typename Node::Link) * height + extra,
      Node::Alignment());
  Node* node = new (mem) Node(key);
  for (int i = 0; i < height; i++) {
    new (mem + Node::LinksOffset() + i * sizeof(typename Node::Link))
        typename Node::Link(nullptr);
  }
  return node;
}

template <typename Key, class Comparator>
SkipList<Key, Comparator>::SkipList(Comparator cmp, Arena* arena, uint32_t seed)
    : compare_(cmp),
      arena_(arena),
      head_(NewNode(Key(), kMaxHeight)),
      max_height_(1),
      // minstd_rand must not be seeded with 0 (mod its modulus).
      rnd_(seed % std::minstd_rand::modulus == 0 ? 1 : seed) {}

template <typename Key, class Comparator>
int SkipList<Key, Comparator>::RandomHeight() {
  int height = 1;
  while (height < kMaxHeight && rnd_() % kBranching == 0) height++;
  assert(height > 0 && height <= kMaxHeight);
  return height;
}

template <typename Key, class Comparator>
typename SkipList<Key, Comparator>::Node*
SkipList<Key, Comparator>::FindGreaterOrEqual(const Key& key,
                                              Node** prev) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (KeyIsAfterNode(key, next)) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      level--;
    }
  }
}

template <typename Key, class Comparator>
typename SkipList<Key, Comparator>::Node*
SkipList<Key, Comparator>::FindLessThan(const Key& key) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    assert(x == head_ || compare_(x->key, key) < 0);
    Node* next = x->Next(level);
    if (next != nullptr && compare_(next->key, key) < 0) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

template <typename Key, class Comparator>
typename SkipList<Key, Comparator>::Node*
SkipList<Key, Comparator>::FindLessOrEqual(const Key& key) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr && compare_(next->key, key) <= 0) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

template <typename Key, class Comparator>
typename SkipList<Key, Comparator>::Node* SkipList<Key, Comparator>::FindLast()
    const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x;
      level--;
    }
  }
}

template <typename Key, class Comparator>
void SkipList<Key, Comparator>::Insert(const Key& key) {
  const int height = RandomHeight();
  InsertNode(NewNode(key, height), height);
}

template <typename Key, class Comparator>
template <typename Build>
void SkipList<Key, Comparator>::InsertInline(size_t key_bytes, Build&& build)
  requires std::is_same_v<Key, const char*>
{
  const int height = RandomHeight();
  Node* x = NewNode(nullptr, height, key_bytes);
  char* key = reinterpret_cast<char*>(x) + Node::LinksOffset() +
              sizeof(typename Node::Link) * height;
  build(key);
  x->key = key;
  InsertNode(x, height);
}

template <typename Key, class Comparator>
void SkipList<Key, Comparator>::InsertNode(Node* x, int height) {
  Node* prev[kMaxHeight];
  [[maybe_unused]] Node* next = FindGreaterOrEqual(x->key, prev);
  assert(next == nullptr || !Equal(x->key, next->key));

  const int old_height = GetMaxHeight();
  if (height > old_height) {
    for (int i = old_height; i < height; i++) prev[i] = head_;
    // Relaxed is enough: a reader that sees the new height early finds null
    // head links at the new levels (or this node, once linked) and descends.
    max_height_.store(height, std::memory_order_relaxed);
  }

  for (int i = 0; i < height; i++) {
    // x is unreachable until prev[i]->SetNext below, whose release store
    // also publishes this relaxed one.
    x->NoBarrierSetNext(i, prev[i]->NoBarrierNext(i));
    prev[i]->SetNext(i, x);
  }
}

template <typename Key, class Comparator>
bool SkipList<Key, Comparator>::Contains(const Key& key) const {
  Node* x = FindGreaterOrEqual(key, nullptr);
  return x != nullptr && Equal(key, x->key);
}

}  // namespace bloomkv

#endif  // BLOOMKV_DB_SKIPLIST_H_
