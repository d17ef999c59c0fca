// `npm run infra:migrate-ferretdb`: copies the data of the previous local default (FerretDB on
// SQLite under var/ferretdb) into the embedded MongoDB-wire server (var/mongo), every database,
// collection, index and document, then renames var/ferretdb to var/ferretdb.migrated. Re-running
// after an interruption is safe: documents already copied are skipped by _id.
import { spawn } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { MongoClient, type Document } from 'mongodb';
import type { LocalInfraSettings } from './settings.ts';
import { ensureFerretdb, ferretdbBinary } from './install.ts';
import { ensureLocalInfra } from './infra.ts';
import { probeMongo } from './probes.ts';
import { sleep } from './processes.ts';

type Say = (message: string) => void;

const BATCH = 1000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export async function migrateFerretdb(s: LocalInfraSettings, say: Say): Promise<void> {
  const oldDir = join(s.varDir, 'ferretdb');
  if (!existsSync(join(oldDir, 'data'))) {
    say(`nothing to migrate: ${oldDir} does not exist`);
    return;
  }
  if (s.external.mongo) throw new Error('MONGO_URL names another server: migrate into it with mongodump/mongorestore');
  ensureFerretdb(s, say);
  await ensureLocalInfra(s, say);

  const port = await freePort();
  const ferret = spawn(
    ferretdbBinary(s),
    [
      '--handler=sqlite',
      `--sqlite-url=file:${join(oldDir, 'data')}/`,
      `--listen-addr=${s.host}:${port}`,
      `--state-dir=${oldDir}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    { stdio: 'ignore' },
  );
  const source = new MongoClient(`mongodb://${s.host}:${port}/?directConnection=true`, { useBigInt64: true });
  const target = new MongoClient(`mongodb://${s.host}:${s.ports.mongo}/?directConnection=true`, { useBigInt64: true });
  try {
    for (let i = 0; (await probeMongo(s.host, port)) !== 'ready'; i++) {
      if (ferret.exitCode !== null || i > 300) throw new Error('FerretDB did not start on the old data');
      await sleep(200);
    }
    const { databases } = await source.db('admin').admin().listDatabases();
    for (const { name } of databases) {
      if (['admin', 'local', 'config'].includes(name)) continue;
      for (const info of await source.db(name).listCollections({}, { nameOnly: true }).toArray()) {
        await copyCollection(source, target, name, info.name, say);
      }
    }
  } finally {
    await source.close();
    await target.close();
    ferret.kill('SIGTERM');
  }
  const moved = `${oldDir}.migrated`;
  renameSync(oldDir, moved);
  say(`done; the old data is kept in ${moved} (delete it when you no longer need it)`);
}

async function copyCollection(
  source: MongoClient,
  target: MongoClient,
  dbName: string,
  collName: string,
  say: Say,
): Promise<void> {
  const from = source.db(dbName).collection(collName);
  const to = target.db(dbName).collection(collName);
  const indexes = (await from.indexes()).filter((i) => i.name !== '_id_');
  const present = new Set((await to.indexes().catch(() => [])).map((i) => i.name));
  for (const index of indexes) {
    if (present.has(index.name)) continue;
    const { key, name, unique, sparse } = index;
    await to.createIndex(key, { name, ...(unique ? { unique } : {}), ...(sparse ? { sparse } : {}) });
  }
  let copied = 0;
  let batch: Document[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await to.insertMany(batch, { ordered: false }).catch((err: { code?: number; writeErrors?: unknown }) => {
      // Already there from an interrupted run: skipped. Anything else stops the migration.
      if (err.code !== 11000) throw err;
    });
    copied += batch.length;
    batch = [];
  };
  for await (const doc of from.find({}).sort({ _id: 1 })) {
    batch.push(doc);
    if (batch.length >= BATCH) await flush();
  }
  await flush();
  const [had, has] = await Promise.all([from.countDocuments({}), to.countDocuments({})]);
  if (has < had) throw new Error(`${dbName}.${collName}: copied ${has} of ${had} documents`);
  say(`${dbName}.${collName}: ${copied} documents, ${indexes.length} indexes`);
}
