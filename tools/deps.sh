#!/bin/sh
# tools/deps.sh: installs the Debian packages evalgate needs.
#   tools/deps.sh         to build and run it
#   tools/deps.sh --test  and to run its tests
#   tools/deps.sh --bench and to run bench/run
#   tools/deps.sh --valgrind  as --test, and valgrind for
#                 ./configure --enable-valgrind
# Packages already present are not touched; nothing is installed unless
# one is missing.  Needs root (or sudo) for apt-get.
set -eu

mode=${1:-}
pkgs="build-essential autoconf automake pkg-config libfcgi-dev
libjson-c-dev libsqlite3-dev libcurl4-openssl-dev libsodium-dev lighttpd
curl libpq-dev"
if [ "$mode" = "--valgrind" ]; then
	# make check runs the unit-test programs under valgrind.
	pkgs="$pkgs valgrind"
	mode=--test
fi
if [ "$mode" = "--test" ]; then
	# Apache with mod_fcgid: the second web server the e2e suite
	# runs the worker under (tests/e2e/test_apache.py).
	pkgs="$pkgs python3 sqlite3 apache2 libapache2-mod-fcgid"
	# tests/e2e/test_shared_hosting.py: a shared host runs the
	# customer's FastCGI programs as the customer (suexec).
	pkgs="$pkgs apache2-suexec-pristine"
	# tests/e2e/test_static_binary.py checks the static build's links.
	pkgs="$pkgs binutils"
	# tests/faults/test_durability.py watches the worker's fsyncs.
	pkgs="$pkgs strace"
	# fuzz/run: libFuzzer targets built with clang (tests/fuzz_smoke.sh).
	pkgs="$pkgs clang libclang-rt-14-dev"
	# tests/e2e/test_calibration.py: renders the calibration page in
	# headless Chromium and keeps a screenshot; so does
	# tests/e2e/test_console_browser.py, through the web console
	# (puppeteer-core, from npm, drives it).
	pkgs="$pkgs chromium"
	# tests/e2e/test_prometheus.py: a real Prometheus scrapes /metrics.
	pkgs="$pkgs prometheus"
	# tests/e2e/pg.py: the suites' second run, the two-host test and
	# the crash test start throw-away PostgreSQL 15 clusters (initdb,
	# postgres, psql, pg_isready of /usr/lib/postgresql/15/bin).
	pkgs="$pkgs postgresql-15"
	# tests/debian/test_package.py: builds the Debian package (and
	# lints it), and installs it in a Debian 12 chroot it makes.
	# multiwatch: systemd-analyze verify looks for evalgate.service's
	# program on this machine.
	pkgs="$pkgs debhelper dpkg-dev fakeroot lintian debootstrap multiwatch"
	command -v node >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
fi
if [ "$mode" = "--test" ] || [ "$mode" = "--bench" ]; then
	# bench/run: the load generator, the fixed-body upstream, and the
	# 300 ms upstream of the slow-backend scenario (echo_sleep).
	pkgs="$pkgs python3 wrk nginx-light libnginx-mod-http-echo"
	# bench/run's PostgreSQL rows start a cluster of their own, and
	# count the workers' round trips to it with strace.
	pkgs="$pkgs postgresql-15 strace"
fi
if [ "$mode" = "--bench" ]; then
	# bench/instructions.py counts a worker's instructions (callgrind).
	pkgs="$pkgs valgrind"
fi

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
echo "tools/deps.sh: installing$missing" >&2
$sudo apt-get update -qq
# Debian starts lighttpd (and apache2) on port 80 when it is installed;
# evalgate runs its own instances, so keep the packaged services from
# starting.
printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
$sudo chmod 755 /usr/sbin/policy-rc.d
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends $missing
$sudo rm -f /usr/sbin/policy-rc.d
