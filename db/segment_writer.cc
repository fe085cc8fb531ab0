// SegmentWriter; see include/bloomkv/segment_writer.h.
//
// A thin layer over SegmentBuilder, the builder every flush and compaction
// uses: the writer only turns user keys into internal keys (sequence 0,
// type value), checks what the builder would otherwise reject as a sticky
// error (so that a bad Put leaves the writer usable), and owns the file's
// durability: fsync, rename into place, directory fsync.
#include "bloomkv/segment_writer.h"

#include "bloomkv/db.h"
#include "bloomkv/env.h"
#include "db/compaction.h"
#include "db/filter_allocation.h"
#include "table/internal_key.h"
#include "table/segment_builder.h"

namespace bloomkv {

SegmentWriter::~SegmentWriter() = default;

namespace {

// The directory holding path, for syncing its entry.
std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

class SegmentWriterImpl final : public SegmentWriter {
 public:
  SegmentWriterImpl(Env* env, std::string path)
      : env_(env), path_(std::move(path)), tmp_path_(path_ + ".tmp") {}
  ~SegmentWriterImpl() override {
    if (!done_) Abandon();
  }

  Status Start(const Options& options) {
    Status s = env_->NewWritableFile(tmp_path_, &file_);
    if (!s.ok()) return s;
    SegmentBuilderOptions bo;
    bo.block_size = options.block_size;
    // Where IngestSegments puts the segment: the last level.
    bo.compression = CompressionForLevel(options, kNumLevels - 1);
    bo.filter_policy = ConfiguredFilterPolicy(options, kNumLevels - 1);
    builder_ = std::make_unique<SegmentBuilder>(bo, file_.get());
    return Status::OK();
  }

  Status Put(const Slice& key, const Slice& value) override {
    if (done_) {
      return Status::InvalidArgument("SegmentWriter::Put after Finish/Abandon");
    }
    if (!status_.ok()) return status_;
    if (key.empty()) return Status::InvalidArgument("empty key");
    if (key.size() > kMaxKeySize) {
      return Status::InvalidArgument(
          "key of " + std::to_string(key.size()) + " bytes exceeds the " +
          std::to_string(kMaxKeySize) + "-byte limit");
    }
    if (value.size() > kMaxValueSize) {
      return Status::InvalidArgument(
          "value of " + std::to_string(value.size()) + " bytes exceeds the " +
          std::to_string(kMaxValueSize) + "-byte limit");
    }
    if (builder_->NumEntries() > 0 && key.compare(Slice(last_key_)) <= 0) {
      return Status::InvalidArgument("key " + key.ToEscapedString() +
                                     " is not greater than the previous key " +
                                     Slice(last_key_).ToEscapedString());
    }
    internal_key_.clear();
    AppendInternalKey(&internal_key_, key, 0, ValueType::kValue);
    status_ = builder_->Add(internal_key_, value);
    if (status_.ok()) last_key_.assign(key.data(), key.size());
    return status_;
  }

  uint64_t NumEntries() const override { return builder_->NumEntries(); }
  uint64_t FileSize() const override { return builder_->FileSize(); }

  Status Finish(SegmentFileInfo* info) override {
    if (done_) {
      return Status::InvalidArgument(
          "SegmentWriter::Finish after Finish/Abandon");
    }
    Status s = status_;
    if (s.ok()) s = builder_->Finish();
    if (s.ok()) s = file_->Sync();
    if (s.ok()) s = file_->Close();
    // A failed Close releases the file all the same.
    file_.reset();
    bool renamed = false;
    if (s.ok()) {
      s = env_->RenameFile(tmp_path_, path_);
      renamed = s.ok();
    }
    if (s.ok()) s = env_->SyncDir(DirName(path_));
    if (!s.ok()) {
      // After a failed directory sync the file at path_ is complete, but
      // its name may not survive a crash: it was not promised, so it goes.
      env_->RemoveFile(renamed ? path_ : tmp_path_).PermitUncheckedError();
      done_ = true;
      status_ = s;
      return s;
    }
    done_ = true;
    const SegmentProperties& props = builder_->properties();
    info->file_path = path_;
    info->num_entries = props.num_entries;
    info->file_size = builder_->FileSize();
    info->smallest_key.clear();
    info->largest_key.clear();
    if (props.num_entries > 0) {
      info->smallest_key = ExtractUserKey(props.smallest_key).ToString();
      info->largest_key = ExtractUserKey(props.largest_key).ToString();
    }
    return Status::OK();
  }

  void Abandon() override {
    if (done_) return;
    done_ = true;
    if (builder_ != nullptr) builder_->Abandon();
    if (file_ != nullptr) {
      file_->Close().PermitUncheckedError();
      file_.reset();
    }
    env_->RemoveFile(tmp_path_).PermitUncheckedError();
  }

 private:
  Env* const env_;
  const std::string path_;
  const std::string tmp_path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<SegmentBuilder> builder_;
  std::string last_key_;
  std::string internal_key_;  // reused by every Put
  Status status_;             // sticky IO error
  bool done_ = false;         // Finish or Abandon called
};

}  // namespace

Status SegmentWriter::Open(const Options& options, const std::string& path,
                           std::unique_ptr<SegmentWriter>* writer) {
  writer->reset();
  if (path.empty()) return Status::InvalidArgument("empty segment path");
  if (options.block_size < 1024 || options.block_size > (4u << 20)) {
    return Status::InvalidArgument("block_size must be in [1 KiB, 4 MiB]");
  }
  Status valid = ValidateFilterOptions(options);
  if (!valid.ok()) return valid;
  Env* env = options.env != nullptr ? options.env : Env::Default();
  auto impl = std::make_unique<SegmentWriterImpl>(env, path);
  Status s = impl->Start(options);
  if (!s.ok()) {
    impl->Abandon();
    return s;
  }
  *writer = std::move(impl);
  return Status::OK();
}

}  // namespace bloomkv
