// VersionSet: applying edits and keeping the manifest; see version_set.h.
#include "db/version_set.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "db/filename.h"
#include "db/log_reader.h"

namespace bloomkv {

uint64_t Version::LevelBytes(int level) const {
  uint64_t total = 0;
  for (const auto& f : files_[level]) total += f->file_size;
  return total;
}

void Version::IndexLevels() {
  deeper_levels_ = 0;
  for (int level = 0; level < kNumLevels; level++) {
    const FileList& files = files_[level];
    std::vector<uint64_t> smallest, largest;
    smallest.reserve(files.size());
    largest.reserve(files.size());
    for (const auto& f : files) {
      smallest.push_back(UserKeyPrefix(ExtractUserKey(f->smallest)));
      largest.push_back(UserKeyPrefix(ExtractUserKey(f->largest)));
    }
    smallest_prefixes_[level] = std::move(smallest);
    if (level == 0) {
      level0_largest_prefixes_ = std::move(largest);
      continue;
    }
    if (!files.empty()) deeper_levels_ |= uint32_t{1} << level;
    largest_prefixes_[level] = PrefixIndex(std::move(largest));
  }
}

std::shared_ptr<const Version> Version::TEST_New(
    const std::vector<FileList>& files) {
  auto v = std::make_shared<Version>();
  for (size_t level = 0; level < files.size() && level < kNumLevels; level++) {
    v->files_[level] = files[level];
  }
  v->IndexLevels();
  return v;
}

void AddVersionContents(const Version& v, VersionEdit* edit) {
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v.files(level)) edit->AddFile(level, f);
  }
  if (v.range_tombstones() != nullptr) {
    for (const RangeTombstone& t : v.range_tombstones()->tombstones()) {
      edit->AddRangeTombstone(t);
    }
  }
}

Status WriteManifestFile(Env* env, const std::string& fname,
                         const VersionEdit& edit) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  {
    log::Writer writer(file.get());
    std::string record;
    edit.EncodeTo(&record);
    s = writer.AddRecord(record);
  }
  if (s.ok()) s = file->Sync();
  Status close = file->Close();
  return s.ok() ? close : s;
}

VersionSet::VersionSet(std::string dbname, Env* env, SegmentOpener opener)
    : dbname_(std::move(dbname)),
      env_(env),
      opener_(std::move(opener)),
      current_(std::make_shared<Version>()) {}

VersionSet::~VersionSet() {
  if (manifest_file_ != nullptr) manifest_file_->Close().PermitUncheckedError();
}

Status VersionSet::Apply(const Version& base, const VersionEdit& edit,
                         std::shared_ptr<Version>* result) const {
  auto v = std::make_shared<Version>();
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : base.files_[level]) {
      if (edit.deleted_files().count({level, f->number}) == 0) {
        v->files_[level].push_back(f);
      }
    }
  }
  for (const auto& [level, number] : edit.deleted_files()) {
    const auto& files = base.files_[level];
    if (std::none_of(files.begin(), files.end(),
                     [n = number](const auto& f) { return f->number == n; })) {
      return Status::Corruption(
          "version edit removes segment " + std::to_string(number) +
          " that is not at level " + std::to_string(level));
    }
  }
  for (const auto& [level, f] : edit.new_files()) {
    v->files_[level].push_back(f);
  }
  v->range_tombstones_ = base.range_tombstones_;
  if (!edit.range_tombstones().empty() ||
      !edit.removed_range_tombstones().empty()) {
    // By sequence: an edit may add or retire thousands (a snapshot edit
    // holds every live one), so each is found without a scan.
    std::map<SequenceNumber, RangeTombstone> live;
    if (base.range_tombstones_ != nullptr) {
      for (const RangeTombstone& t : base.range_tombstones_->tombstones()) {
        live.emplace_hint(live.end(), t.sequence, t);
      }
    }
    for (SequenceNumber seq : edit.removed_range_tombstones()) {
      if (live.erase(seq) == 0) {
        return Status::Corruption("version edit retires range tombstone @" +
                                  std::to_string(seq) + ", which is not live");
      }
    }
    for (const RangeTombstone& t : edit.range_tombstones()) {
      auto [it, added] = live.emplace(t.sequence, t);
      if (!added && !(it->second == t)) {
        // One sequence number is one write: two ranges cannot share it.
        return Status::Corruption("version edit adds range tombstone @" +
                                  std::to_string(t.sequence) +
                                  " with a range other than the live one's");
      }
    }
    std::vector<RangeTombstone> tombstones;
    tombstones.reserve(live.size());
    for (auto& [seq, t] : live) tombstones.push_back(std::move(t));
    v->range_tombstones_ =
        tombstones.empty()
            ? nullptr
            : std::make_shared<const RangeTombstoneSet>(std::move(tombstones));
  }
  // Level 0 is searched newest first; segment numbers grow with the age of
  // the data they hold, as flushes happen in order.
  auto& l0 = v->files_[0];
  std::sort(l0.begin(), l0.end(),
            [](const auto& a, const auto& b) { return a->number > b->number; });
  for (int level = 1; level < kNumLevels; level++) {
    auto& files = v->files_[level];
    std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
      return CompareInternalKeys(a->smallest, b->smallest) < 0;
    });
  }
  v->IndexLevels();
  *result = std::move(v);
  return Status::OK();
}

void VersionSet::RecordLogs(const VersionEdit& edit) {
  for (const auto& [number, synced_size] : edit.logs()) {
    uint64_t& recorded = recorded_logs_[number];
    recorded = std::max(recorded, synced_size);
  }
  std::erase_if(recorded_logs_,
                [this](const auto& log) { return log.first < log_number_; });
}

void VersionSet::Install(std::shared_ptr<Version> v) {
  versions_.remove_if([](const auto& w) { return w.expired(); });
  versions_.push_back(v);
  current_ = std::move(v);
}

Status VersionSet::Recover() {
  std::string current;
  Status s = ReadFileToString(env_, CurrentFileName(dbname_), &current);
  if (!s.ok()) return s;
  if (current.empty() || current.back() != '\n') {
    return Status::Corruption(CurrentFileName(dbname_),
                              "does not end with a newline");
  }
  current.pop_back();
  uint64_t manifest_number;
  FileType type;
  if (!ParseFileName(current, &manifest_number, &type) ||
      type != FileType::kManifestFile) {
    return Status::Corruption(CurrentFileName(dbname_),
                              "names no manifest: '" + current + "'");
  }
  const std::string manifest = dbname_ + "/" + current;
  std::unique_ptr<SequentialFile> file;
  s = env_->NewSequentialFile(manifest, &file);
  if (!s.ok()) {
    return Status::Corruption(
        CurrentFileName(dbname_),
        "names a manifest that cannot be read: " + s.message());
  }

  struct Reporter : log::Reader::Reporter {
    Status status;
    void Corruption(size_t, const Status& reason) override {
      if (status.ok()) status = reason;
    }
  } reporter;
  log::Reader reader(file.get(), manifest, &reporter,
                     /*verify_checksums=*/true);

  auto v = std::make_shared<Version>();
  bool have_log = false, have_next = false, have_seq = false;
  Slice record;
  std::string scratch;
  while (reader.ReadRecord(&record, &scratch) && reporter.status.ok()) {
    VersionEdit edit;
    s = edit.DecodeFrom(record);
    if (s.ok()) {
      std::shared_ptr<Version> next;
      s = Apply(*v, edit, &next);
      if (s.ok()) v = std::move(next);
    }
    if (!s.ok()) {
      return Status::Corruption(manifest + " at offset " +
                                    std::to_string(reader.LastRecordOffset()),
                                s.message())
          .AtOffset(reader.LastRecordOffset());
    }
    if (edit.has_log_number()) {
      log_number_ = edit.log_number();
      have_log = true;
    }
    if (edit.has_next_file_number()) {
      next_file_number_ = edit.next_file_number();
      have_next = true;
    }
    if (edit.has_last_sequence()) {
      last_sequence_ = edit.last_sequence();
      have_seq = true;
    }
    RecordLogs(edit);
  }
  if (!reporter.status.ok()) return reporter.status;
  if (!have_log || !have_next || !have_seq) {
    return Status::Corruption(manifest,
                              "incomplete: no log number, next "
                              "file number or last sequence");
  }
  manifest_number_ = manifest_number;
  MarkFileNumberUsed(manifest_number);
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v->files_[level]) {
      MarkFileNumberUsed(f->number);
      opener_(f.get());
    }
  }
  if (reader.torn_tail()) {
    s = CheckTornTailVersion(*v);
    if (!s.ok()) {
      return Status::Corruption(
                 manifest + " at offset " +
                     std::to_string(reader.torn_tail_offset()),
                 "damaged last record, and the version before it is gone too "
                 "(" +
                     s.message() + ")")
          .AtOffset(reader.torn_tail_offset());
    }
  }
  Install(std::move(v));
  return Status::OK();
}

Status VersionSet::CheckTornTailVersion(const Version& v) const {
  for (int level = 0; level < kNumLevels; level++) {
    for (const auto& f : v.files_[level]) {
      if (!f->open_status.ok()) return f->open_status;
    }
  }
  // The log a version names is deleted only after a later edit is durable.
  if (log_number_ != 0 &&
      !env_->FileExists(LogFileName(dbname_, log_number_))) {
    return Status::Corruption(LogFileName(dbname_, log_number_), "is missing");
  }
  return Status::OK();
}

Status VersionSet::WriteSnapshotManifest() {
  const uint64_t number = NewFileNumber();
  const std::string fname = ManifestFileName(dbname_, number);
  std::unique_ptr<WritableFile> file;
  Status s = env_->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  auto writer = std::make_unique<log::Writer>(file.get());

  VersionEdit snapshot;
  snapshot.SetLogNumber(log_number_);
  snapshot.SetNextFileNumber(next_file_number_);
  snapshot.SetLastSequence(last_sequence_);
  AddVersionContents(*current_, &snapshot);
  for (const auto& [log, synced_size] : recorded_logs_) {
    snapshot.AddLog(log, synced_size);
  }
  std::string record;
  snapshot.EncodeTo(&record);
  s = writer->AddRecord(record);
  if (s.ok()) s = file->Sync();
  if (!s.ok()) {
    file->Close().PermitUncheckedError();
    env_->RemoveFile(fname).PermitUncheckedError();
    return s;
  }
  s = SetCurrentFile(env_, dbname_, number);
  if (!s.ok()) {
    // CURRENT may name the new manifest already: keep it. The next Open
    // recovers from whichever manifest CURRENT names; both are complete.
    file->Close().PermitUncheckedError();
    return s;
  }
  if (manifest_file_ != nullptr) manifest_file_->Close().PermitUncheckedError();
  manifest_file_ = std::move(file);
  manifest_log_ = std::move(writer);
  manifest_number_ = number;
  return Status::OK();
}

Status VersionSet::LogAndApply(VersionEdit* edit, Mutex* mu) {
  while (writing_manifest_) manifest_cv_.Wait(mu);
  if (!manifest_error_.ok()) return manifest_error_;
  const uint64_t log_number = edit->has_log_number()
                                  ? std::max(log_number_, edit->log_number())
                                  : log_number_;
  edit->SetLogNumber(log_number);
  edit->SetNextFileNumber(next_file_number_);
  edit->SetLastSequence(last_sequence_);

  std::shared_ptr<Version> v;
  Status s = Apply(*current_, *edit, &v);
  if (!s.ok()) return s;
  // A retired range tombstone no longer hides what it covered from an
  // answer kept before: a change of the live set is never answer-keeping.
  assert(!edit->preserves_answers() ||
         (edit->range_tombstones().empty() &&
          edit->removed_range_tombstones().empty()));
  v->answers_epoch_ = edit->preserves_answers() ? current_->answers_epoch_
                                                : ++last_answers_epoch_;

  std::string record;
  edit->EncodeTo(&record);
  // Manifest IO happens without the DB mutex so that reads and writes go on;
  // writing_manifest_ keeps other LogAndApply calls out meanwhile.
  writing_manifest_ = true;
  mu->Unlock();
  s = manifest_log_->AddRecord(record);
  if (s.ok()) s = manifest_file_->Sync();
  mu->Lock();
  writing_manifest_ = false;
  manifest_cv_.SignalAll();
  if (!s.ok()) {
    // The record may be in the file, whole or in part, and a next record
    // would follow a torn one: the manifest takes no more edits. The next
    // Open starts a fresh one.
    manifest_error_ = s;
    return s;
  }
  log_number_ = log_number;
  RecordLogs(*edit);
  Install(std::move(v));
  return Status::OK();
}

void VersionSet::AddLiveFiles(std::set<uint64_t>* live) {
  versions_.remove_if([](const auto& w) { return w.expired(); });
  for (const auto& w : versions_) {
    if (auto v = w.lock()) {
      for (int level = 0; level < kNumLevels; level++) {
        for (const auto& f : v->files_[level]) live->insert(f->number);
      }
    }
  }
}

}  // namespace bloomkv
