// Route schemas (TypeBox), by resource in schemas/: they validate requests, serialize responses and
// generate the OpenAPI document. The route files import them from there; this module gathers them for
// the other importers (app.ts's nameSchemas, the fast transport's test).
export * from './schemas/assign.js';
export * from './schemas/common.js';
export * from './schemas/experiments.js';
export { nameSchemas } from './schemas/openapi.js';
export * from './schemas/results.js';
