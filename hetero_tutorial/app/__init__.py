"""The programs around the package: the command line, the notebook runner, the doctor,
calibration, README generation, and ``bench/`` (one thin adapter per benchmark)."""
