#!/usr/bin/env bash
# Installs uws-body as a user would and runs its tests against the installed copy:
# packs the main package and the linux-x64-gnu platform package, installs both tarballs
# into a new project with cargo and rustc off PATH, checks that nothing but JS, types,
# README, license and the binary arrived, reads a body over a real uWS server, then runs
# __test__ from inside node_modules/uws-body (so `require('..')` is the installed copy).
#   bash scripts/test-package.sh [--no-build]   (npm run test:package)
# --no-build packs npm/linux-x64-gnu/uws-body.linux-x64-gnu.node as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
id=linux-x64-gnu
[ "${1:-}" = --no-build ] || bash scripts/build-target.sh "$id"
bash scripts/check-glibc.sh "npm/$id/uws-body.$id.node"

work=$(mktemp -d /tmp/uws-body-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "== pack"
# --ignore-scripts: packing must not run `prepare` (a source build) for the tarballs.
main_tgz=$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -1)
plat_tgz=$(cd "npm/$id" && npm pack --ignore-scripts --silent --pack-destination "$work" | tail -1)
ls -l "$work"/*.tgz

fail () { echo "test-package: $*" >&2; exit 1; }
# With its scripts, as tools run it: what `prepare` says must not reach the JSON on stdout.
npm pack --json --dry-run 2>/dev/null > "$work/pack.json"
node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$work/pack.json" 2>/dev/null ||
  fail "npm pack --json --dry-run: stdout is not JSON alone: $(head -c 200 "$work/pack.json")"
# What each tarball may hold: anything else is a packaging mistake.
tar -tzf "$work/$main_tgz" | sort > "$work/main.list"
if grep -vE '^package/(package\.json|README\.md|LICENSE|index\.js|index\.mjs|index\.d\.ts|lib/.*\.js)$' "$work/main.list"; then
  fail "unexpected files in $main_tgz (above)"
fi
tar -tzf "$work/$plat_tgz" | sort > "$work/plat.list"
[ "$(cat "$work/plat.list")" = "$(printf 'package/package.json\npackage/uws-body.%s.node' "$id")" ] ||
  fail "$plat_tgz holds: $(tr '\n' ' ' < "$work/plat.list")"
tar -xzOf "$work/$main_tgz" package/package.json | node -e '
  const s = JSON.parse(require("fs").readFileSync(0, "utf8")).scripts || {}
  const bad = ["preinstall", "install", "postinstall"].filter((k) => s[k])
  if (bad.length) { console.error("test-package: install scripts in the main package: " + bad); process.exit(1) }'

echo "== install the tarballs, without Rust"
# PATH without any directory that holds cargo or rustc.
clean_path=$(node -e '
  const fs = require("fs"), path = require("path")
  console.log(process.env.PATH.split(":").filter((d) => !["cargo", "rustc"].some((b) => fs.existsSync(path.join(d, b)))).join(":"))')
mkdir "$work/app"
cd "$work/app"
echo '{ "name": "app", "version": "1.0.0", "private": true }' > package.json
export PATH="$clean_path"
if command -v cargo >/dev/null || command -v rustc >/dev/null; then fail "cargo or rustc still on PATH"; fi
start=$(date +%s.%N)
npm install --no-audit --no-fund --loglevel=error "$work/$main_tgz" "$work/$plat_tgz"
echo "test-package: installed both tarballs in $(node -p "($(date +%s.%N) - $start).toFixed(1)") s"
for pkg in uws-body "uws-body-$id"; do
  find "node_modules/$pkg" -type f | sed "s|^node_modules/||" | sort > "$work/$pkg.files"
  du -sh "node_modules/$pkg"
done
if grep -vE '\.(js|mjs|d\.ts|json|md|node)$|/LICENSE$' "$work/uws-body.files" "$work/uws-body-$id.files"; then
  fail "unexpected files installed (above)"
fi
[ "$(wc -l < "$work/uws-body-$id.files")" = 2 ] || fail "uws-body-$id: $(cat "$work/uws-body-$id.files")"

echo "== a body over a real uWS server"
# The tests' dependencies, as the repository pins them (its package.json devDependencies
# and overrides), minus the build tool.
node -e '
  const fs = require("fs")
  const repo = require(process.argv[1] + "/package.json")
  const app = JSON.parse(fs.readFileSync("package.json"))
  app.devDependencies = { ...repo.devDependencies }
  delete app.devDependencies["@napi-rs/cli"]
  app.overrides = repo.overrides
  fs.writeFileSync("package.json", JSON.stringify(app, null, 2))' "$repo"
npm install --no-audit --no-fund --loglevel=error
# shellcheck disable=SC2016 # JS template literals, not shell
node -e '
  console.log("test-package: " + require(process.argv[1] + "/scripts/test-env/loadable-uws").useLoadableUws(process.cwd()))
  const uWS = require("uWebSockets.js")
  const { readBody } = require("uws-body")
  const loaded = Object.keys(require.cache).filter((f) => require("path").basename(f).startsWith("uws-body."))
  if (loaded.length !== 1 || !loaded[0].includes("/node_modules/uws-body-'"$id"'/")) throw new Error("loaded " + loaded)
  console.log("test-package: addon loaded from " + loaded[0])
  const body = Buffer.alloc(3 << 20, 7)
  uWS.App().post("/", (res, req) => {
    readBody(res, req, { limit: "8mb" }).then((b) => res.cork(() => res.end(String(b.length))))
  }).listen("127.0.0.1", 0, async (token) => {
    const port = uWS.us_socket_local_port(token)
    const r = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body })
    const text = await r.text()
    uWS.us_listen_socket_close(token)
    if (text !== String(body.length)) throw new Error("answer " + text)
    console.log(`test-package: uWS read a ${text}-byte body through the installed package`)
  })' "$repo"

echo "== the test suite, against the installed copy"
# The examples too: examples.test.js runs them, and their `require('..')` is then the
# installed copy, as a user's copy of an example would be.
cp -r "$repo/__test__" node_modules/uws-body/__test__
cp -r "$repo/examples" node_modules/uws-body/examples
UWS_BODY_TEST_REPO="$repo" node "$repo/scripts/run-tests.js" --all node_modules/uws-body/__test__
