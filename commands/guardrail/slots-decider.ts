/**
 * The places under one `max_concurrent_runs` limit (`slots-<scope>`): a run handed to a worker
 * takes one, decided on this stream's revision so that no two processes hand out the last one.
 * A run that ended (or went back to the queue) frees its place: the claim names those it found
 * ended when it takes a place, and a reactor frees them too.
 */
import type { Decider } from '../../src/kernel/decider.js';
import { own, putOwn } from '../../src/own-keys.js';
import type { SlotsEvent } from './events.js';

export type SlotsState = { held: Record<string, string | null> };

export type SlotsCommand =
  | {
      type: 'TakeSlot';
      data: { scope_key: string; run_id: string; factory_uid: string | null; max: number; ended: string[] };
    }
  | { type: 'FreeSlot'; data: { scope_key: string; run_id: string } };

export const slotsDecider: Decider<SlotsCommand, SlotsEvent, SlotsState> = {
  initialState: () => ({ held: {} }),
  evolve: (state, event) => {
    const held = { ...state.held };
    if (event.type === 'SlotTaken') putOwn(held, event.data.run_id, event.data.factory_uid);
    else delete held[event.data.run_id];
    return { held };
  },
  decide: (command, state) => {
    const { scope_key, run_id } = command.data;
    if (command.type === 'FreeSlot')
      return own(state.held, run_id) !== undefined ? [{ type: 'SlotFreed', data: { scope_key, run_id } }] : [];
    const freed = command.data.ended.filter((id) => own(state.held, id) !== undefined && id !== run_id);
    const events: SlotsEvent[] = freed.map((id) => ({ type: 'SlotFreed', data: { scope_key, run_id: id } }));
    if (own(state.held, run_id) !== undefined) return events;
    if (Object.keys(state.held).length - freed.length >= command.data.max) return events;
    return [...events, { type: 'SlotTaken', data: { scope_key, run_id, factory_uid: command.data.factory_uid } }];
  },
};
