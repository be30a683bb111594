#!/usr/bin/env bash
# npm test: build, then run every test with a real container engine (started for the run when
# none answers, and stopped afterwards). Arguments go to vitest (npm test -- test/unit).
set -euo pipefail
LOG_PREFIX=test
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
npm run build --silent
exec bash "$ROOT/scripts/with-engine.sh" npx vitest run "$@"
