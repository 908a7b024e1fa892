#!/usr/bin/env node
// The `shopfloor` command: runs the TypeScript CLI through tsx, as `npm start` runs the server.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
