/**
 * The team feature's public module: what the other features, and its own read models and
 * queries, may use of it besides its events. Nothing else of it may be imported from outside
 * its folders (.dependency-cruiser.cjs).
 */
export { teamDecider } from './team-decider.js';
export { accessAuditProjection, type AuditEntryDoc, teamAudit } from '../../projections/team/access-audit.js';
export { teamMembersProjection } from '../../projections/team/team-members.js';
export { teamsProjection } from '../../projections/team/teams.js';
