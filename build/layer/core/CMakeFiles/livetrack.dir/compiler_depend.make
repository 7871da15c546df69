# Empty compiler generated dependencies file for livetrack.
# This may be replaced when dependencies are built.
