import { createInstance } from './lib/instance.mjs';
import { privateMemoryOf, rssOf } from './lib/server.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
const bins = process.argv.slice(2);
const inst = await createInstance({ name: `rss-${process.pid}` });
try {
  await inst.prebuild();
  for (let round = 0; round < 3; round++) for (const bin of bins) {
    const client = new Client({ name: 'x', version: '1' });
    const t = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', inst.dataDir], stderr: 'ignore' });
    await client.connect(t);
    await client.callTool({ name: 'login', arguments: {} });
    await new Promise((r) => setTimeout(r, 6000));
    console.log(bin, 'rss', ((await rssOf(t.pid)) / 1e6).toFixed(1), 'private', ((await privateMemoryOf(t.pid)) / 1e6).toFixed(1));
    await client.close();
    await new Promise((r) => setTimeout(r, 1000));
  }
} finally { await inst.cleanup(); }
