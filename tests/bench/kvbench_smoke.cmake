# kvbench smoke test (ctest bench.kvbench_smoke): runs a tiny kvbench and
# checks that its JSON report holds what the benchmark protocol relies on,
# so the harness cannot break silently. Checks no timing, only structure:
#   - every run succeeded and verified every lookup;
#   - each read phase has a median and min-max over --repeat repetitions
#     (min <= median <= max) and ran its probes at least once;
#   - each store records its shape (files per level) and open descriptors;
#   - --settle=background leaves level-0 files, --settle=compact none;
#   - each store waited for an idle process before its timed phases;
#   - --compression=none reaches the bloomkv store;
#   - --mmap_reads=on,off gives one bloomkv store per read mode;
#   - --filter_configs gives each store its filters: bloom everywhere, or
#     binary fuse below level 0 (named in its levels table);
#   - --use_existing_db reads stores a kept fill left, checks every value
#     and keeps them; it refuses write phases and a missing --db.
# Usage: cmake -DKVBENCH=<kvbench> -DWORK_DIR=<scratch dir> -P kvbench_smoke.cmake
cmake_minimum_required(VERSION 3.19)  # string(JSON)

set(kRepeat 3)

function(fail msg)
  message(FATAL_ERROR "kvbench smoke: ${msg}")
endfunction()

function(json_get out json)
  string(JSON value ERROR_VARIABLE err GET "${json}" ${ARGN})
  if(err)
    fail("${ARGN}: ${err}")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Runs kvbench with the given arguments and checks its report; the bloomkv
# stores' level-0 file counts end up in ${level0_out}.
function(run_and_check name level0_out)
  set(json_file "${WORK_DIR}/${name}.json")
  file(REMOVE "${json_file}")
  execute_process(
    COMMAND "${KVBENCH}" --num=20000 --reads=2000 --min_seconds=0.05
            --repeat=${kRepeat} --write_buffer_mb=1 --db=${WORK_DIR}/${name}
            --json=${json_file} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    fail("${name}: kvbench exited with ${rc}\n${out}\n${err}")
  endif()
  string(FIND "${out}" "min-max" table_has_range)
  if(table_has_range LESS 0)
    fail("${name}: the table has no min-max column\n${out}")
  endif()
  file(READ "${json_file}" json)
  json_get(runs "${json}" runs)
  string(JSON num_runs LENGTH "${runs}")
  if(num_runs EQUAL 0)
    fail("${name}: no runs in the report")
  endif()
  set(level0 "")
  math(EXPR last_run "${num_runs} - 1")
  foreach(i RANGE ${last_run})
    json_get(engine "${json}" runs ${i} engine)
    json_get(error "${json}" runs ${i} error)
    if(NOT error STREQUAL "")
      fail("${name}: ${engine}: ${error}")
    endif()
    json_get(shape "${json}" runs ${i} files_per_level)
    string(JSON levels LENGTH "${shape}")
    # LMDB is one B+tree file: it has no levels to record.
    if(levels EQUAL 0 AND NOT engine STREQUAL "lmdb")
      fail("${name}: ${engine} recorded no shape")
    endif()
    if(engine STREQUAL "bloomkv")
      json_get(files0 "${json}" runs ${i} files_per_level 0)
      list(APPEND level0 ${files0})
    endif()
    json_get(fds "${json}" runs ${i} open_fds)
    # Every timed phase first waits at least one 100 ms window for the
    # process to be idle.
    json_get(idle_wait "${json}" runs ${i} idle_wait_seconds)
    if(idle_wait LESS 0.1)
      fail("${name}: ${engine} did not wait for an idle process (${idle_wait} s)")
    endif()
    json_get(phases "${json}" runs ${i} phases)
    string(JSON num_phases LENGTH "${phases}")
    math(EXPR last_phase "${num_phases} - 1")
    set(read_phases 0)
    foreach(p RANGE ${last_phase})
      json_get(phase "${json}" runs ${i} phases ${p} name)
      json_get(verify_errors "${json}" runs ${i} phases ${p} verify_errors)
      if(NOT verify_errors EQUAL 0)
        fail("${name}: ${engine} ${phase}: ${verify_errors} verify errors")
      endif()
      if(phase STREQUAL "fill")
        continue()
      endif()
      math(EXPR read_phases "${read_phases} + 1")
      json_get(median "${json}" runs ${i} phases ${p} ops_per_sec_median)
      json_get(min "${json}" runs ${i} phases ${p} ops_per_sec_min)
      json_get(max "${json}" runs ${i} phases ${p} ops_per_sec_max)
      json_get(reps "${json}" runs ${i} phases ${p} repetitions)
      json_get(passes "${json}" runs ${i} phases ${p} passes)
      string(JSON num_reps LENGTH "${reps}")
      if(NOT num_reps EQUAL kRepeat)
        fail("${name}: ${engine} ${phase}: ${num_reps} repetitions, not ${kRepeat}")
      endif()
      # Compared as text-converted numbers: CMake's if() compares floats.
      if(min GREATER median OR median GREATER max OR NOT min GREATER 0)
        fail("${name}: ${engine} ${phase}: not min ${min} <= median ${median} <= max ${max}")
      endif()
      if(passes LESS 1)
        fail("${name}: ${engine} ${phase}: probes never ran")
      endif()
    endforeach()
    if(read_phases EQUAL 0)
      fail("${name}: ${engine} ran no read phase")
    endif()
  endforeach()
  json_get(process_rss "${json}" process peak_rss)
  if(NOT process_rss GREATER 0)
    fail("${name}: no process peak RSS")
  endif()
  set(${level0_out} "${level0}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Every engine built in, filters on and off taking turns.
run_and_check(background level0 --compare)
foreach(n ${level0})
  if(n LESS 1)
    fail("--settle=background left no level-0 file in a bloomkv store")
  endif()
endforeach()

run_and_check(compact level0 --engines=bloomkv --settle=compact
              --compression=none --benchmarks=fill,readmiss)
foreach(n ${level0})
  if(NOT n EQUAL 0)
    fail("--settle=compact left ${n} level-0 files in a bloomkv store")
  endif()
endforeach()

# The compacted default store (--bits_per_key 10, no --filter_configs) has
# the library's default below level 0: fuse8.
file(READ "${WORK_DIR}/compact.json" json)
json_get(label "${json}" runs 0 filter_label)
json_get(levels "${json}" runs 0 filter_summary levels)
string(FIND "${levels}" "bloomkv.BinaryFuse8" has_fuse)
if(NOT label STREQUAL "10 bpk" OR has_fuse LESS 0)
  fail("compact: ${label}: no fuse filter below level 0 in\n${levels}")
endif()
# --compression=none reaches the store: raw blocks below level 0 too.
json_get(desc "${json}" runs 0 description)
string(FIND "${desc}" "compression L0 none, then none" raw_everywhere)
if(raw_everywhere LESS 0)
  fail("compact: --compression=none not in the description ${desc}")
endif()

# A list of open-file budgets: one store each, side by side, labelled by it.
# -1 keeps every file open ("mofall"); LevelDB has no such setting.
run_and_check(openfiles level0 --engines=bloomkv --max_open_files=0,20,-1
              --benchmarks=fill,readhit)
file(READ "${WORK_DIR}/openfiles.json" json)
json_get(label0 "${json}" runs 0 filter_label)
json_get(label1 "${json}" runs 1 filter_label)
json_get(label2 "${json}" runs 2 filter_label)
json_get(mof1 "${json}" runs 1 max_open_files)
json_get(mof2 "${json}" runs 2 max_open_files)
json_get(desc1 "${json}" runs 1 description)
json_get(desc2 "${json}" runs 2 description)
string(FIND "${desc1}" "max_open_files 20" has_mof)
string(FIND "${desc2}" "max_open_files -1" has_all)
if(NOT label0 STREQUAL "10 bpk" OR NOT label1 STREQUAL "10 bpk mof20" OR
   NOT label2 STREQUAL "10 bpk mofall" OR NOT mof1 EQUAL 20 OR
   NOT mof2 EQUAL -1 OR has_mof LESS 0 OR has_all LESS 0)
  fail("openfiles: labels '${label0}', '${label1}', '${label2}', "
       "max_open_files ${mof1} ${mof2}, descriptions ${desc1} ${desc2}")
endif()
execute_process(
  COMMAND "${KVBENCH}" --num=100 --engines=leveldb,bloomkv
          --max_open_files=-1 --benchmarks=fill --db=${WORK_DIR}/mofleveldb
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${err}" "LevelDB cannot keep every table file open" has_reason)
string(FIND "${err}" "engine leveldb is not built" no_leveldb)
if(no_leveldb LESS 0 AND (NOT rc EQUAL 2 OR has_reason LESS 0))
  fail("--max_open_files=-1 with leveldb: exit ${rc}, stderr ${err}")
endif()

# A list of read modes: one bloomkv store each, labelled and described by it.
run_and_check(mmap level0 --engines=bloomkv --mmap_reads=on,off
              --benchmarks=fill,readhit)
file(READ "${WORK_DIR}/mmap.json" json)
foreach(i 0 1)
  json_get(label "${json}" runs ${i} filter_label)
  json_get(mode "${json}" runs ${i} mmap_reads)
  json_get(desc "${json}" runs ${i} description)
  if(mode STREQUAL "on")
    set(want "mmap reads")
  else()
    set(want "pread reads")
  endif()
  string(FIND "${desc}" "${want}" has_mode)
  if(NOT label STREQUAL "10 bpk mmap-${mode}" OR has_mode LESS 0)
    fail("mmap: store ${i}: label '${label}', mmap_reads '${mode}', "
         "description ${desc}")
  endif()
  set(mode${i} "${mode}")
endforeach()
if(NOT mode0 STREQUAL "on" OR NOT mode1 STREQUAL "off")
  fail("mmap: stores read '${mode0}' and '${mode1}', not on and off")
endif()

# Compacted, so that the 10+fuse8 store has a level below level 0.
run_and_check(perlevel level0 --engines=bloomkv --filter_configs=10,10+fuse8
              --settle=compact --benchmarks=fill,readmiss)
file(READ "${WORK_DIR}/perlevel.json" json)
foreach(i 0 1)
  json_get(label "${json}" runs ${i} filter_label)
  json_get(levels "${json}" runs ${i} filter_summary levels)
  string(FIND "${levels}" "bloomkv.BinaryFuse8" has_fuse)
  string(FIND "${levels}" "bloomkv.BlockedBloom.v1" has_bloom)
  if(label STREQUAL "10+fuse8")
    if(has_fuse LESS 0)
      fail("perlevel: ${label}: no fuse filter below level 0 in\n${levels}")
    endif()
  elseif(label STREQUAL "10 bloom")
    if(NOT has_fuse LESS 0 OR has_bloom LESS 0)
      fail("perlevel: ${label}: not bloom alone in\n${levels}")
    endif()
  else()
    fail("perlevel: unexpected filter label ${label}")
  endif()
endforeach()

# Stores kept after a fill and read again by another run: every value
# checked, and the stores left in place.
execute_process(
  COMMAND "${KVBENCH}" --num=20000 --write_buffer_mb=1 --benchmarks=fill
          --keep --db=${WORK_DIR}/existing
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  fail("existing: the fill exited with ${rc}\n${err}")
endif()
run_and_check(existing level0 --use_existing_db --benchmarks=readhit,mixed)
if(NOT IS_DIRECTORY "${WORK_DIR}/existing/bloomkv-filters")
  fail("--use_existing_db deleted the store it read")
endif()
# Another seed's codes are not in those stores: the lookups say so.
execute_process(
  COMMAND "${KVBENCH}" --num=20000 --reads=2000 --min_seconds=0 --seed=7
          --engines=bloomkv --benchmarks=readhit --use_existing_db
          --db=${WORK_DIR}/existing
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${err}" "lookups returned a wrong result" has_wrong)
if(NOT rc EQUAL 1 OR has_wrong LESS 0)
  fail("--use_existing_db with another seed: exit ${rc}, stderr ${err}")
endif()
foreach(args "--benchmarks=fill" "--benchmarks=readhit;--db=${WORK_DIR}/none")
  execute_process(COMMAND "${KVBENCH}" --use_existing_db ${args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR err STREQUAL "")
    fail("--use_existing_db ${args}: exit ${rc}, stderr ${err}")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "kvbench smoke: OK")
