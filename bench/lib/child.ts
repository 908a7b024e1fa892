/** The process of one workload: `node --import tsx bench/lib/child.ts <workload file>`. */
import { pathToFileURL } from 'node:url';
import type { ChildReport, Workload } from './workload.js';

const file = process.argv[2];
if (!file || !process.send) throw new Error('usage: forked by bench/run.ts with a workload file');
const workload = (await import(pathToFileURL(file).href)).default as Workload;
const result = await workload.run();
const report: ChildReport = { title: workload.title, result, maxRssMb: process.resourceUsage().maxRSS / 1024 };
process.send(report, () => process.exit(0));
