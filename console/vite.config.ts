/**
 * The console's build: `npm run console:build` writes console/dist, which is committed (the
 * server and the Docker image serve it without a build tool; test/console/build.test.ts fails
 * when it is stale). No source maps: the sources are in the repository.
 */
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false })],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    manifest: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 300,
  },
});
