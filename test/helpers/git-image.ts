import { readFileSync } from 'node:fs';
import { TEST_CONTAINERFILE } from './test-instance.js';

/** Containerfile.test plus git: for tests where the agent commits inside its container. */
export const GIT_CONTAINERFILE = readFileSync(TEST_CONTAINERFILE, 'utf8').replace('vim-tiny less', 'vim-tiny less git');
if (!GIT_CONTAINERFILE.includes(' git ')) throw new Error('Containerfile.test changed: add git to GIT_CONTAINERFILE another way');

/** The agent's identity and a trusted repo setting, as the agent would set them in its container. */
export const AGENT_GIT_SETUP = "git config --global user.name agent && git config --global user.email agent@example.com && git config --global --add safe.directory '*'";
