import { readFileSync } from 'node:fs';
import { TEST_CONTAINERFILE } from './test-instance.js';

/** Containerfile.test plus git, which global-setup.ts builds (with the network) and tags GIT_TEST_IMAGE. */
export const GIT_BUILD_CONTAINERFILE = readFileSync(TEST_CONTAINERFILE, 'utf8').replace('vim-tiny less', 'vim-tiny less git');
if (!GIT_BUILD_CONTAINERFILE.includes(' git ')) throw new Error('Containerfile.test changed: add git to GIT_BUILD_CONTAINERFILE another way');
export const GIT_TEST_IMAGE = 'agent-kernel-test/git:current';

/** For tests where the agent commits inside its container: the test image with git, built once per run. */
export const GIT_CONTAINERFILE = `FROM ${GIT_TEST_IMAGE}\n`;

/** The agent's identity and a trusted repo setting, as the agent would set them in its container. */
export const AGENT_GIT_SETUP = "git config --global user.name agent && git config --global user.email agent@example.com && git config --global --add safe.directory '*'";
