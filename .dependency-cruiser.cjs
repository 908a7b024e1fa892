/**
 * The layering rule of docs/architecture.md "Dependencies point inward", checked by `npm test`:
 * src/ is the platform and knows no feature (but for the composition root, src/features.ts);
 * a feature is one name on every side (commands/<f>/, projections/<f>/, queries/<f>/) and offers
 * the others its events (commands/<f>/events.ts) and its public module (commands/<f>/public.ts)
 * only; projections/ and queries/ reach the write side through those two, their own feature's
 * too; commands/ (the write side) does not read queries/ (but for each feature's entry, index.ts);
 * the worker program and the web console (console/) are clients of the API; and nothing imports
 * in a circle.
 */
module.exports = {
  forbidden: [
    {
      name: 'platform-knows-no-feature',
      comment: 'src/ is the platform: only the composition root (src/features.ts) names features',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/features\\.ts$' },
      to: { path: '^(commands|queries|projections)/' },
    },
    {
      name: 'commands-do-not-read-queries',
      comment: 'a command that needs to read asks its stream or a read model, not a query module; only the feature entry wires queries in',
      severity: 'error',
      from: { path: '^commands/', pathNot: '^commands/[^/]+/index\\.ts$' },
      to: { path: '^queries/' },
    },
    {
      name: 'features-share-events-and-public',
      comment: 'a feature imports of another feature only its events.ts and public.ts (the public module says what it offers)',
      severity: 'error',
      from: { path: '^(commands|projections|queries)/([^/]+)/' },
      to: {
        path: '^(commands|projections|queries)/',
        pathNot: ['^(commands|projections|queries)/$2/', '^commands/[^/]+/(events|public)\\.ts$'],
      },
    },
    {
      name: 'read-side-uses-events-and-public',
      comment: "projections/ and queries/ import of the write side only a feature's events.ts and public.ts, their own feature's too",
      severity: 'error',
      from: { path: '^(queries|projections)/' },
      to: { path: '^commands/', pathNot: '^commands/[^/]+/(events|public)\\.ts$' },
    },
    {
      name: 'projections-do-not-read-queries',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: '^queries/' },
    },
    {
      name: 'worker-program-is-a-client',
      comment: 'the reference worker talks to the server over HTTP only',
      severity: 'error',
      from: { path: '^src/cli/worker/' },
      to: { path: '^(src|commands|queries|projections)/', pathNot: ['^src/cli/worker/', '^src/feature\\.ts$'] },
    },
    {
      name: 'console-is-a-client',
      comment: 'the web console talks to the server over its public API only (and the server serves its build, importing none of it)',
      severity: 'error',
      from: { path: '^console/' },
      to: { path: '^(src|commands|queries|projections)/' },
    },
    {
      name: 'server-imports-no-console',
      severity: 'error',
      from: { path: '^(src|commands|queries|projections)/' },
      to: { path: '^console/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
