# The Level Zero destroy, free and close calls livetrack watches are named
# in three places that must agree: the tracer's registrations
# (callbacks.c), the exported replacements that record a destroy the
# tracer no longer reports at exit (untraced_destroys.c) and the version
# script that exports them (exports.map); and the library built must
# export exactly those (plus zeInit). A call added to one list only would
# either go untracked at exit or be exported without a tracer behind it.
#
# cmake -DSOURCE_DIR=<layer/levelzero> -DLIBRARY=<liblivetrack_ze.so> -DNM=<nm> -P check_destroy_lists.cmake

# (The patterns stop short of any ';': CMake would split a match there.)
function(sorted_matches out text regex)
  string(REGEX MATCHALL "${regex}" found "${text}")
  set(names "")
  foreach(item IN LISTS found)
    string(REGEX REPLACE "${regex}" "\\1" name "${item}")
    list(APPEND names "ze${name}")
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

file(READ "${SOURCE_DIR}/callbacks.c" callbacks)
file(READ "${SOURCE_DIR}/untraced_destroys.c" untraced)
file(READ "${SOURCE_DIR}/exports.map" exports)

sorted_matches(registered "${callbacks}" "REGISTER_DESTROY\\(([A-Z][A-Za-z]+)\\)")
# The X-macro's entries: "X(Name, LTZE_..." inside UNTRACED_DESTROYS.
string(REGEX MATCH "#define UNTRACED_DESTROYS\\(X\\)[^#]*" table "${untraced}")
sorted_matches(replaced "${table}" "X\\(([A-Za-z]+), LTZE_")
string(REGEX MATCH "global:[^}]*local:" global "${exports}")
sorted_matches(exported "${global}" "[ \t\n]ze([A-Za-z]+)")
list(REMOVE_ITEM exported zeInit)

execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}" OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${LIBRARY}")
endif()
sorted_matches(built "${symbols}" " [TtWi] ze([A-Za-z]+)")
list(REMOVE_ITEM built zeInit)

list(LENGTH registered count)
if(count LESS 10)
  message(FATAL_ERROR "found only ${count} REGISTER_DESTROY calls in callbacks.c: the parse is broken")
endif()
set(failed 0)
foreach(list_name replaced exported built)
  if(NOT "${${list_name}}" STREQUAL "${registered}")
    set(failed 1)
    set(missing ${registered})
    list(REMOVE_ITEM missing ${${list_name}})
    set(extra ${${list_name}})
    list(REMOVE_ITEM extra ${registered})
    message(SEND_ERROR "${list_name} differs from the tracer's registrations: missing [${missing}], extra [${extra}]")
  endif()
endforeach()
if(NOT failed)
  message(STATUS "the ${count} destroy calls agree: tracer, replacements, version script, ${LIBRARY}")
endif()
