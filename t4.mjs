const { PGlite } = await import('@electric-sql/pglite');
const t = performance.now();
const db = await PGlite.create('/tmp/vxh/data/voxpipe/pg');
console.log('create', Math.round(performance.now() - t));
await db.close();
