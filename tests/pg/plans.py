"""plans.py: runs tests/unit/store_pg_plan_test (the plans PostgreSQL
makes for the statements that walk decisions and outcomes) against a
database of a throw-away cluster (tests/e2e/pg.py), and stops the
cluster after it; skips in a build without the PostgreSQL engine.
Speaks TAP (the program's)."""

import os
import sys

BUILDDIR = os.environ.get("EVALGATE_BUILDDIR", ".")
SRCDIR = os.environ.get("EVALGATE_SRCDIR", ".")
sys.path.insert(0, os.path.join(SRCDIR, "tests", "e2e"))

import pg  # noqa: E402

if not pg.built(BUILDDIR):
    print("1..0 # SKIP a build without the PostgreSQL engine")
    sys.exit(0)
os.execv(sys.executable, [sys.executable, os.path.join(SRCDIR, "tests",
                                                       "e2e", "pg.py"),
                          os.path.join(BUILDDIR, "tests", "unit",
                                       "store_pg_plan_test")])
