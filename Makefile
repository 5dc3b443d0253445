# node-scaling-lab: every target works as the first command on a fresh clone.
# ARGS passes flags to the experiments, e.g. `make lesson-3 ARGS=--quick`.

NODE_RUN := node --import tsx
STAMP := node_modules/.package-lock.json
# The running Node's own headers (its prefix, with include/node), for compiling better-sqlite3:
# npm's nodedir setting may name another Node's, and a module built against those does not load.
NODEDIR = $(shell node -p "const p = require('path'), d = p.dirname(p.dirname(process.execPath)); require('fs').existsSync(p.join(d, 'include/node/node_version.h')) ? d : ''" 2>/dev/null)
NPM_ENV = $(if $(NODEDIR),npm_config_nodedir=$(NODEDIR))

.PHONY: test test-unit test-e2e test-all screenshots typecheck format format-check traffic-lab traffic-lab-bench lessons lesson-1 lesson-2 lesson-3 lesson-4 lesson-5 lesson-6 lesson-7 lesson-8 lesson-9 lesson-10 lesson-11 lesson-12 incident incident-fix sim sim-bench fidelity compare rollup check-exercise check-node ready clean

# npm ci writes node_modules/.package-lock.json; it is older than package-lock.json when the
# dependencies changed since the last install.
$(STAMP): package-lock.json | check-node
	@echo "Installing the kit's dependencies (npm ci): about 1 to 2 minutes; better-sqlite3 is compiled for Node.js $$(node --version) when npm finds no prebuilt binary for it."
	@start=$$(date +%s); $(NPM_ENV) npm ci --no-audit --no-fund && echo "Installed in $$(( $$(date +%s) - start )) s."
	@$(NODE_RUN) lib/native-cli.ts record
	@touch $(STAMP)

# node_modules built by another Node.js (nvm, fnm or Homebrew switched it since): rebuild
# better-sqlite3 for this one, or say in one line what to run. The install's record is read first
# (one plain node start); the check itself loads better-sqlite3, with the running Node's headers.
ready: $(STAMP)
	@node -e 'try { process.exit(require("./node_modules/.nsl-native.json").modules === process.versions.modules ? 0 : 1) } catch { process.exit(1) }' || $(NODE_RUN) lib/native-cli.ts check

check-node:
	@command -v node >/dev/null || { echo "error: node was not found; install Node.js 20 or newer (https://nodejs.org)" >&2; exit 1; }
	@node -e 'if (Number(process.versions.node.split(".")[0]) < 20) { console.error("error KIT_ERR_NODE_TOO_OLD: this kit needs Node.js 20 or newer; this is Node.js " + process.versions.node + "; install a current LTS from https://nodejs.org"); process.exit(1) }'

lesson-1: ready
	@$(NODE_RUN) measure/lesson.ts 1 $(ARGS)

# Lesson 2 measures nginx too when it is installed (the nginx lines say so when it is not).
lesson-2: ready
	@$(NODE_RUN) measure/lesson.ts 2 $(ARGS)

lesson-3: ready
	@$(NODE_RUN) measure/lesson.ts 3 $(ARGS)

# LB=nginx make lesson-4 (or 5, 6, 7) runs it through real nginx (the experiments read LB themselves).
lesson-4: ready
	@$(NODE_RUN) measure/lesson.ts 4 $(ARGS)

# Lesson 5's capped replicas write to SQLite; --db postgres needs PostgreSQL.
lesson-5: ready
	@$(NODE_RUN) measure/lesson.ts 5 $(ARGS)

# Lesson 6 stops, kills, freezes and drains replicas while load runs.
lesson-6: ready
	@$(NODE_RUN) measure/lesson.ts 6 $(ARGS)

# Lesson 7 keeps state in memory, SQLite and Redis; the Redis rows need redis-server (or REDIS_URL).
lesson-7: ready
	@$(NODE_RUN) measure/lesson.ts 7 $(ARGS)

# Lesson 8 gives each cluster worker a CPU quota: a cgroup when run as root, else an in-process throttle.
lesson-8: ready
	@$(NODE_RUN) measure/lesson.ts 8 $(ARGS)

# Lesson 9 stamps each stage of a request on both sides; its proxy part uses nginx too when installed.
lesson-9: ready
	@$(NODE_RUN) measure/lesson.ts 9 $(ARGS)

# Lesson 10 plants one fault in a library service and measures it, phase by phase.
lesson-10: ready
	@$(NODE_RUN) measure/lesson.ts 10 $(ARGS)

# Lesson 11 sends one service more users than it can serve: queues, timeouts, retries and shedding.
lesson-11: ready
	@$(NODE_RUN) measure/lesson.ts 11 $(ARGS)

# Lesson 12 puts a replica behind a real link: as root on Linux, a namespace with real packet loss.
lesson-12: ready
	@$(NODE_RUN) measure/lesson.ts 12 $(ARGS)

# A random incident (SEED=<n>: a given one), measured; then name it (NAME=<incident>, or you are asked).
incident: ready
	@$(NODE_RUN) measure/incident.ts $(if $(SEED),--seed $(SEED)) $(if $(NAME),--name $(NAME)) $(ARGS)

# Your fix of incident NAME, measured: exercises/incidents/<NAME>.ts, copied from the planted handler on first use.
incident-fix: ready
	@test -n "$(NAME)" || { echo "error: name the incident: make incident-fix NAME=<redos|pool|keepalive|shutdown|cache|sync-read>" >&2; exit 2; }
	@$(NODE_RUN) measure/incident.ts --mine $(NAME) $(ARGS)

# Every lesson in order, then which shapes held.
lessons: ready
	@$(NODE_RUN) measure/lesson.ts all $(ARGS)

# The simulator: `make sim SCENARIO=stale`; `npx tsx sim/run.ts --help` lists the scenarios.
SCENARIO ?= degraded
sim: ready
	@$(NODE_RUN) sim/run.ts --scenario $(SCENARIO) $(ARGS)

# The Traffic Lab page: prints a URL on 127.0.0.1 to open in a browser.
traffic-lab: ready
	@$(NODE_RUN) web/traffic-lab.ts $(ARGS)

# The Traffic Lab's frame rate, in-browser simulator speed, live stream cost and memory (about 13 minutes; ARGS="--part fps").
traffic-lab-bench: ready
	@$(NODE_RUN) web/bench.ts $(ARGS)

sim-bench: ready
	@node --expose-gc --import tsx sim/bench.ts $(ARGS)

# Every experiment again and again (20 --quick runs each; ARGS="--full --runs 3" for full runs):
# how many runs held their shape. A line that does not hold every time is a bug in the kit.
fidelity: ready
	@$(NODE_RUN) measure/fidelity.ts $(ARGS)

# Students' --shape files against expected-output/: make compare FILES="alice.txt bob.txt".
# In a script, call npx tsx measure/compare.ts directly: make turns any failure into exit code 2.
compare: ready
	@$(NODE_RUN) measure/compare.ts $(FILES) $(ARGS)

# A class's --json files, one folder per student: make rollup DIR=class/.
rollup: ready
	@$(NODE_RUN) measure/rollup.ts $(DIR) $(ARGS)

# Runs an exercise and checks what it shows: make check-exercise LESSON=4 N=1 (ARGS=--quick; NAME=<incident> for 10.2).
check-exercise: ready
	@$(NODE_RUN) measure/check-exercise.ts $(if $(LESSON),--lesson $(LESSON)) $(if $(N),--exercise $(N)) $(if $(ANSWER),--answer $(ANSWER)) $(if $(NAME),--name $(NAME)) $(ARGS)

# Two programs: the kit (Node.js types) and the Traffic Lab page (web/page, the DOM's).
typecheck: ready
	npx tsc --noEmit
	npx tsc --noEmit -p web/page

# The code's format (Prettier, .prettierrc.json): `make format` rewrites the files, and the fast tier
# checks them (format-check) beside the type check.
PRETTIER_FILES := '**/*.{ts,mts,mjs}'
format: ready
	@npx prettier --write --log-level warn $(PRETTIER_FILES)

format-check: ready
	@npx prettier --check --log-level warn $(PRETTIER_FILES) || { echo "error: the files above are not formatted: run make format" >&2; exit 1; }

# The tests, in two tiers; where a test file lives decides its tier (test/unit/code-layout.test.ts
# checks that every test file is in one of these folders):
#   test/unit/         start no process: all in one process (test/run-unit.ts), beside the type check
#   test/integration/  real servers, scripts and browsers on loopback, one file at a time
#   test/smoke/        one short end-to-end run per lesson, one file at a time
#   test/e2e/          every other experiment run, on both balancers; --predict, --save, timings
#                      measured over seconds, and the class roll-up of the runs (class-rollup.test.ts,
#                      run last: make test-all points both tiers at one class folder)
# The timing tests and the experiments must not share the two cores, so they run one file at a time.
# NSL_TEST_TIMES=<file> (set by .ci/run) also appends each test file's wall time to that file.
NODE_TEST = node --import tsx --test --test-reporter=spec --test-reporter-destination=stdout $(if $(NSL_TEST_TIMES),--test-reporter=./test/file-times.mjs --test-reporter-destination=stdout)
E2E_LAST := test/e2e/class-rollup.test.ts

# The fast tier: the type check, every unit test, the servers and browsers, and one run per lesson
# (about 5 minutes). The type check and the format check run beside the unit tests: none of them
# times anything.
test: ready
	@$(MAKE) --no-print-directory -j2 typecheck format-check test-unit
	$(NODE_TEST) --test-concurrency=1 test/integration/*.test.ts test/smoke/*.test.ts

# The fast tier's part that depends on the Node version that runs it, for checking another Node
# (CI's 20, 22 and 26; about 2 minutes): every unit test, and the servers and scripts on loopback.
# Not the type check and the format check, which read the code whatever Node runs them; not the
# browser pages, which the browsers run; and not the lesson runs, whose shapes are timing, checked
# with both tiers on Node 24, the active LTS.
BROWSER_PAGES := test/integration/rollup-page.test.ts test/integration/traffic-lab.test.ts test/integration/traffic-lab-live.test.ts
test-node: ready
	$(NODE_TEST) test/run-unit.ts
	$(NODE_TEST) --test-concurrency=1 $(filter-out $(BROWSER_PAGES),$(wildcard test/integration/*.test.ts))

# The unit tests alone, every file in one process (test/run-unit.ts says why); a file alone:
# node --import tsx --test test/unit/<file>.test.ts
test-unit: ready
	$(NODE_TEST) test/run-unit.ts

# The end-to-end tier: every experiment run that make test leaves out (about 19 minutes).
test-e2e: ready
	$(NODE_TEST) --test-concurrency=1 $(filter-out $(E2E_LAST),$(wildcard test/e2e/*.test.ts))
	$(NODE_TEST) $(E2E_LAST)

# Both tiers, sharing one class folder that the last test rolls up (about 24 minutes).
test-all: ready
	@class=$$(mktemp -d "$${TMPDIR:-/tmp}/nsl-class-XXXXXX") || exit 1; trap 'rm -rf "$$class"' EXIT INT TERM; \
	NSL_CLASS_DIR=$$class $(MAKE) --no-print-directory test test-e2e

# The pictures in docs/, taken by the browser tests that check those pages (test/helpers.ts
# screenshotPath): the class roll-up at a projector's 1,400 x 900, the Traffic Lab in each mode, and a
# --profile flame graph page.
screenshots: ready
	NSL_SCREENSHOTS=$(CURDIR)/docs $(NODE_TEST) --test-concurrency=1 $(BROWSER_PAGES) test/e2e/profile.test.ts

clean:
	rm -rf node_modules
