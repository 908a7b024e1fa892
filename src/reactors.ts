/** Every reactor the server runs: reactions of the write side to its own events. */
import type { AnyReactor } from './projector/reactor.js';
import type { Runtime } from './runtime.js';

export const reactors: ReadonlyArray<AnyReactor<Runtime>> = [];
