/**
 * The directory that holds package.json, examples/ and console/ beside the code: the
 * repository root when running src/ through tsx (src/package-root.ts), dist/ when running
 * tsc's output (dist/src/package-root.js) or the bundle (dist/server/<chunk>.js), where
 * scripts/build.sh copies them. Every file read relative to the code goes through this one
 * URL, because the bundle moves the modules that read them to other depths than src/ had.
 */
export const PACKAGE_ROOT: URL = new URL('../', import.meta.url);
