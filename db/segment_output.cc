// SegmentOutput; see segment_output.h.
#include "db/segment_output.h"

#include "db/filename.h"

namespace bloomkv {

SegmentOutput::SegmentOutput(const Options& options, const std::string& dbname,
                             uint64_t number,
                             std::shared_ptr<const FilterPolicy> filter_policy,
                             CompressionType compression,
                             std::shared_ptr<const ValueDictionary> encoded_values)
    : options_(options),
      env_(options.env),
      fname_(SegmentFileName(dbname, number)),
      number_(number),
      filter_policy_(std::move(filter_policy)),
      compression_(compression),
      encoded_values_(std::move(encoded_values)) {}

SegmentOutput::~SegmentOutput() {
  // An output neither finished nor abandoned is incomplete: remove it.
  if (file_ != nullptr) Abandon();
}

Status SegmentOutput::Open() {
  Status s = env_->NewWritableFile(fname_, &file_);
  if (!s.ok()) return s;
  SegmentBuilderOptions bo;
  bo.block_size = options_.block_size;
  bo.compression = compression_;
  bo.filter_policy = filter_policy_;
  bo.value_dictionary = encoded_values_;
  bo.values_encoded = encoded_values_ != nullptr;
  builder_ = std::make_unique<SegmentBuilder>(bo, file_.get());
  return Status::OK();
}

Status SegmentOutput::Finish(std::shared_ptr<FileMetaData>* meta) {
  Status s = FinishUnsynced(meta);
  if (s.ok()) s = SyncAndClose();
  if (!s.ok()) meta->reset();
  return s;
}

Status SegmentOutput::FinishUnsynced(std::shared_ptr<FileMetaData>* meta) {
  Status s = builder_->Finish();
  finished_ = true;
  if (!s.ok()) {
    Abandon();
    return s;
  }
  auto f = std::make_shared<FileMetaData>();
  f->number = number_;
  f->file_size = builder_->FileSize();
  f->num_entries = builder_->NumEntries();
  f->smallest = builder_->properties().smallest_key;
  f->largest = builder_->properties().largest_key;
  *meta = std::move(f);
  return Status::OK();
}

Status SegmentOutput::SyncAndClose() {
  Status s = file_->Sync();
  Status close = file_->Close();
  if (s.ok()) s = close;
  if (!s.ok()) {
    Abandon();
    return s;
  }
  file_.reset();
  return Status::OK();
}

void SegmentOutput::Abandon() {
  if (builder_ != nullptr && !finished_) builder_->Abandon();
  finished_ = true;
  if (file_ != nullptr) {
    file_->Close().PermitUncheckedError();
    file_.reset();
  }
  env_->RemoveFile(fname_).PermitUncheckedError();
}

}  // namespace bloomkv
