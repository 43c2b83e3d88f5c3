"""The test suite (a regular package: pgx 2.6 installs a top-level ``tests`` package that would
otherwise shadow ``tests.positions``)."""
