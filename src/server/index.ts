/** The voxpipe reference server: a local implementation of the whole specified service. */
export { startServer, DEV_API_KEY, accountFromSeed } from './app.js';
export { DIALECTS, dialectOf, describeDialect } from './dialect.js';
export type { Dialect, DialectName } from './dialect.js';
export type { AccountSeed, ReferenceServer, ServerModule, ServerOptions } from './app.js';
export type { ServerContext, ServerUrls } from './context.js';
export type { FaultPlan } from './faults.js';
export { Faults } from './faults.js';
export { Ledger, InsufficientBalance } from './ledger.js';
export { MemoryStore } from './store/memory.js';
export { PgliteStore } from './store/pglite.js';
export { PostgresStore, type PostgresStoreOptions } from './store/postgres.js';
export { SqlStore } from './store/sql.js';
export { tasksIdle } from './rest/common/task-runner.js';
export type { Account, Store, LedgerEntry, Collection } from './store/types.js';
