file(REMOVE_RECURSE
  "CMakeFiles/livetrack.dir/clock.c.o"
  "CMakeFiles/livetrack.dir/clock.c.o.d"
  "CMakeFiles/livetrack.dir/diagnostics.c.o"
  "CMakeFiles/livetrack.dir/diagnostics.c.o.d"
  "CMakeFiles/livetrack.dir/leak_report.c.o"
  "CMakeFiles/livetrack.dir/leak_report.c.o.d"
  "CMakeFiles/livetrack.dir/memory.c.o"
  "CMakeFiles/livetrack.dir/memory.c.o.d"
  "CMakeFiles/livetrack.dir/registry.c.o"
  "CMakeFiles/livetrack.dir/registry.c.o.d"
  "CMakeFiles/livetrack.dir/settings.c.o"
  "CMakeFiles/livetrack.dir/settings.c.o.d"
  "CMakeFiles/livetrack.dir/snapshot.c.o"
  "CMakeFiles/livetrack.dir/snapshot.c.o.d"
  "CMakeFiles/livetrack.dir/types.c.o"
  "CMakeFiles/livetrack.dir/types.c.o.d"
  "liblivetrack.pdb"
  "liblivetrack.so"
  "liblivetrack.so.0"
  "liblivetrack.so.0.1.0"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/livetrack.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
