// DBIter: hides versions, tombstones and unseen writes from an internal
// iterator.
//
// Internal entries of one user key are adjacent, newest (largest sequence)
// first. The iterator keeps one of two positions, by direction:
//  - forward: the internal iterator sits on the entry being yielded, the
//    newest visible entry of key(); key() and value() read through to it.
//  - reverse: the internal iterator sits just before every entry of key()
//    (on the last entry of a smaller user key, or off the front), because
//    finding a key's newest visible entry backward means walking all of its
//    entries; key() and value() are copies in saved_key_ and saved_value_.
// Switching direction moves the internal iterator between these two
// positions before stepping.
#include "db/db_iter.h"

#include <cassert>
#include <string>
#include <utility>

namespace bloomkv {

namespace {

class DBIter final : public Iterator {
 public:
  DBIter(std::unique_ptr<Iterator> iter, SequenceNumber sequence,
         std::function<void()> cleanup, const Slice* lower,
         const Slice* upper,
         std::shared_ptr<const RangeTombstoneSet> range_tombstones)
      : iter_(std::move(iter)),
        sequence_(sequence > kMaxSequenceNumber ? kMaxSequenceNumber
                                                : sequence),
        cleanup_(std::move(cleanup)),
        has_lower_(lower != nullptr),
        has_upper_(upper != nullptr),
        lower_(lower != nullptr ? lower->ToString() : std::string()),
        upper_(upper != nullptr ? upper->ToString() : std::string()),
        range_tombstones_(std::move(range_tombstones)) {}

  ~DBIter() override {
    // The internal iterator may point into what cleanup_ unpins.
    iter_.reset();
    if (cleanup_) cleanup_();
  }

  bool Valid() const override { return valid_; }

  Slice key() const override {
    assert(valid_);
    return direction_ == Direction::kForward ? ExtractUserKey(iter_->key())
                                             : Slice(saved_key_);
  }

  Slice value() const override {
    assert(valid_);
    return direction_ == Direction::kForward ? iter_->value()
                                             : Slice(saved_value_);
  }

  Status status() const override {
    if (!status_.ok()) return status_;
    return iter_->status();
  }

  void SeekToFirst() override {
    if (has_lower_) {
      Seek(lower_);
      return;
    }
    Reset(Direction::kForward);
    iter_->SeekToFirst();
    FindNextUserEntry(/*skipping=*/false);
  }

  void SeekToLast() override {
    if (has_upper_) {
      SeekBeforeUpper();
      return;
    }
    Reset(Direction::kReverse);
    iter_->SeekToLast();
    FindPrevUserEntry();
  }

  void Seek(const Slice& target) override {
    if (has_lower_ && target.compare(lower_) < 0) {
      Seek(lower_);
      return;
    }
    Reset(Direction::kForward);
    // The first entry of target visible at sequence_; newer ones sort before.
    iter_->Seek(MakeInternalKey(target, sequence_, kValueTypeForSeek));
    FindNextUserEntry(/*skipping=*/false);
  }

  void SeekForPrev(const Slice& target) override {
    if (has_upper_ && target.compare(upper_) >= 0) {
      SeekBeforeUpper();
      return;
    }
    Reset(Direction::kReverse);
    // Sequence 0 with the smallest type is the largest internal key of
    // target, so this lands on target's oldest entry or before it.
    iter_->SeekForPrev(MakeInternalKey(target, 0, ValueType::kDeletion));
    FindPrevUserEntry();
  }

  void Next() override {
    assert(valid_);
    if (direction_ == Direction::kReverse) {
      // saved_key_ is key(); step onto its first entry (off the front means
      // its first entry is the very first one) and skip all of its entries.
      direction_ = Direction::kForward;
      if (iter_->Valid()) {
        iter_->Next();
      } else {
        iter_->SeekToFirst();
      }
    } else {
      saved_key_.assign(ExtractUserKey(iter_->key()).view());
      iter_->Next();
    }
    FindNextUserEntry(/*skipping=*/true);
  }

  void Prev() override {
    assert(valid_);
    if (direction_ == Direction::kForward) {
      // The entries of key() before the current one are all newer than the
      // snapshot (the current one is the newest visible), so the backward
      // walk passes over them without effect: one step back is enough.
      direction_ = Direction::kReverse;
      iter_->Prev();
    }
    FindPrevUserEntry();
  }

 private:
  enum class Direction { kForward, kReverse };

  void Reset(Direction direction) {
    direction_ = direction;
    status_ = Status::OK();
    valid_ = false;
  }

  // Reverse, onto the last user key below upper_: the internal iterator
  // goes to the first entry at or above upper_, then one step back (or to
  // the very last entry when there is none).
  void SeekBeforeUpper() {
    Reset(Direction::kReverse);
    iter_->Seek(MakeInternalKey(upper_, kMaxSequenceNumber, kValueTypeForSeek));
    if (iter_->Valid()) {
      iter_->Prev();
    } else if (iter_->status().ok()) {
      iter_->SeekToLast();
    }
    FindPrevUserEntry();
  }

  // The internal iterator ran out or failed: nothing to yield here. Its
  // status, if an error, reaches the caller through status().
  void Invalidate() {
    valid_ = false;
    saved_key_.clear();
    saved_value_.clear();
  }

  // A deletion, or a value a range tombstone covers at sequence_.
  bool Hidden(const ParsedInternalKey& ikey) const {
    return ikey.type == ValueType::kDeletion ||
           (range_tombstones_ != nullptr &&
            range_tombstones_->Covers(ikey.user_key, ikey.sequence,
                                      sequence_));
  }

  bool ParseCurrent(ParsedInternalKey* ikey) {
    if (ParseInternalKey(iter_->key(), ikey)) return true;
    status_ = Status::Corruption("db iterator: malformed internal key",
                                 iter_->key().ToEscapedString());
    Invalidate();
    return false;
  }

  // Forward: from the internal iterator's position, stops on the newest
  // visible entry of the first user key whose newest visible entry is a
  // value. If skipping, entries of user keys <= saved_key_ are passed over
  // (they belong to keys already yielded or already known deleted).
  void FindNextUserEntry(bool skipping) {
    assert(direction_ == Direction::kForward);
    for (; iter_->Valid(); iter_->Next()) {
      ParsedInternalKey ikey;
      if (!ParseCurrent(&ikey)) return;
      // Past the upper bound nothing more is yielded: stop before reading
      // the entries there.
      if (has_upper_ && ikey.user_key.compare(upper_) >= 0) break;
      if (ikey.sequence > sequence_) continue;
      if (skipping && ikey.user_key.compare(saved_key_) <= 0) continue;
      if (Hidden(ikey)) {
        // Everything older of this key is shadowed by the tombstone (a
        // range tombstone covering this entry covers the older ones too).
        saved_key_.assign(ikey.user_key.view());
        skipping = true;
        continue;
      }
      valid_ = true;
      return;
    }
    Invalidate();
  }

  // Reverse: from the internal iterator's position, walks back over whole
  // user keys until one's newest visible entry is a value, then stops on the
  // entry before that key's entries, with the key and value saved.
  void FindPrevUserEntry() {
    assert(direction_ == Direction::kReverse);
    // Whether saved_key_/saved_value_ hold a value that is, so far, the
    // newest visible entry of the key being walked.
    bool have_value = false;
    while (iter_->Valid()) {
      ParsedInternalKey ikey;
      if (!ParseCurrent(&ikey)) return;
      // Entries run oldest to newest within a key, so reaching a smaller
      // key settles the previous one.
      if (have_value && ikey.user_key.compare(saved_key_) < 0) break;
      // Below the lower bound nothing more is yielded.
      if (has_lower_ && ikey.user_key.compare(lower_) < 0) break;
      if (ikey.sequence <= sequence_) {
        if (Hidden(ikey)) {
          have_value = false;
        } else {
          saved_key_.assign(ikey.user_key.view());
          saved_value_.assign(iter_->value().view());
          have_value = true;
        }
      }
      iter_->Prev();
    }
    // A failed internal iterator may have hidden a newer entry of the key
    // in hand: yield nothing rather than a possibly stale value.
    if (!have_value || (!iter_->Valid() && !iter_->status().ok())) {
      Invalidate();
      return;
    }
    valid_ = true;
  }

  std::unique_ptr<Iterator> iter_;
  const SequenceNumber sequence_;
  std::function<void()> cleanup_;
  // ReadOptions::iterate_lower_bound and _upper_bound, copied.
  const bool has_lower_;
  const bool has_upper_;
  const std::string lower_;
  const std::string upper_;
  const std::shared_ptr<const RangeTombstoneSet> range_tombstones_;
  Direction direction_ = Direction::kForward;
  bool valid_ = false;
  Status status_;
  // Reverse: key() and value(). Forward: the user key being skipped.
  std::string saved_key_;
  std::string saved_value_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(std::unique_ptr<Iterator> internal_iter,
                                        SequenceNumber sequence,
                                        std::function<void()> cleanup,
                                        const Slice* lower,
                                        const Slice* upper,
    std::shared_ptr<const RangeTombstoneSet> range_tombstones) {
  if (internal_iter == nullptr) {
    internal_iter.reset(NewErrorIterator(
        Status::InvalidArgument("db iterator: null internal iterator")));
  }
  return std::make_unique<DBIter>(std::move(internal_iter), sequence,
                                  std::move(cleanup), lower, upper,
                                  std::move(range_tombstones));
}

}  // namespace bloomkv
