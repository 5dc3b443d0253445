# node-scaling-lab: every target works as the first command on a fresh clone.
# ARGS passes flags to the experiments, e.g. `make lesson-3 ARGS=--quick`.

NODE_RUN := node --import tsx
STAMP := node_modules/.package-lock.json

.PHONY: test typecheck lessons lesson-1 lesson-2 lesson-3 lesson-4 lesson-5 lesson-6 sim sim-bench fidelity compare check-node clean

# npm ci writes node_modules/.package-lock.json; it is older than package-lock.json when the
# dependencies changed since the last install.
$(STAMP): package-lock.json | check-node
	npm ci --no-audit --no-fund
	@touch $(STAMP)

check-node:
	@command -v node >/dev/null || { echo "error: node was not found; install Node.js 20 or newer (https://nodejs.org)" >&2; exit 1; }
	@node -e 'if (Number(process.versions.node.split(".")[0]) < 20) { console.error("error KIT_ERR_NODE_TOO_OLD: this kit needs Node.js 20 or newer; this is Node.js " + process.versions.node + "; install a current LTS from https://nodejs.org"); process.exit(1) }'

lesson-1: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 1 $(ARGS)

# Lesson 2 measures nginx too when it is installed (the nginx lines say so when it is not).
lesson-2: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 2 $(ARGS)

lesson-3: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 3 $(ARGS)

# LB=nginx make lesson-4 runs it through real nginx (the experiments read LB themselves).
lesson-4: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 4 $(ARGS)

# Lesson 5 keeps state in memory, SQLite and Redis; the Redis rows need redis-server (or REDIS_URL).
lesson-5: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 5 $(ARGS)

# Lesson 6 gives each cluster worker a CPU quota: a cgroup when run as root, else an in-process throttle.
lesson-6: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts 6 $(ARGS)

# Every lesson in order, then which shapes held.
lessons: $(STAMP)
	@$(NODE_RUN) measure/lesson.ts all $(ARGS)

# The simulator: `make sim SCENARIO=stale`; `npx tsx sim/run.ts --help` lists the scenarios.
SCENARIO ?= degraded
sim: $(STAMP)
	@$(NODE_RUN) sim/run.ts --scenario $(SCENARIO) $(ARGS)

sim-bench: $(STAMP)
	@node --expose-gc --import tsx sim/bench.ts $(ARGS)

# Every experiment again and again (20 --quick runs each; ARGS="--full --runs 3" for full runs):
# how many runs held their shape. A line that does not hold every time is a bug in the kit.
fidelity: $(STAMP)
	@$(NODE_RUN) measure/fidelity.ts $(ARGS)

# Students' --shape files against expected-output/: make compare FILES="alice.txt bob.txt".
# In a script, call npx tsx measure/compare.ts directly: make turns any failure into exit code 2.
compare: $(STAMP)
	@$(NODE_RUN) measure/compare.ts $(FILES) $(ARGS)

typecheck: $(STAMP)
	npx tsc --noEmit

test: typecheck
	node --import tsx --test --test-concurrency=1 --test-reporter=spec test/*.test.ts

clean:
	rm -rf node_modules
