// The generated deployment files: fresh, one Compose service and one Deployment per role and
// pipeline of pipelines/index.ts, a lag autoscaler per consuming pipeline, and YAML that reads back
// as the data it was written from. Schema validation (Compose schema, kubeconform) is
// `npm run deploy:check` in CI: it needs Go and the module proxy.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { pipelines } from '../../../pipelines/index.ts';
import { composeFile } from '../../../deploy/generate/compose.ts';
import { k8sFiles } from '../../../deploy/generate/k8s.ts';
import { staleFiles } from '../../../deploy/generate/main.ts';
import { WITHOUT_CONSUMER_LAG } from '../../../deploy/generate/roles.ts';
import { toYaml } from '../../../deploy/generate/yaml.ts';

const root = join(__dirname, '..', '..', '..');

test('deploy/compose and deploy/k8s are what deploy/generate writes (npm run deploy:generate)', () => {
  expect(staleFiles(root)).toEqual([]);
});

test('the Compose file runs every pipeline and reads back as generated', () => {
  const compose = parse(readFileSync(join(root, 'deploy/compose/compose.yaml'), 'utf8')) as {
    services: Record<string, { command?: string[] }>;
  };
  expect(compose).toEqual(JSON.parse(JSON.stringify(composeFile())));
  for (const name of Object.keys(pipelines))
    expect(compose.services[`pipeline-${name}`].command).toEqual(['pipeline', name]);
  for (const s of ['api', 'streaming', 'haproxy', 'mongo1', 'mongo2', 'mongo3', 'kafka1', 'kafka2', 'kafka3'])
    expect(compose.services[s]).toBeDefined();
});

test('Kubernetes: a Deployment and PodDisruptionBudget per pipeline, a lag ScaledObject per consuming one', () => {
  for (const name of Object.keys(pipelines)) {
    const text = readFileSync(join(root, 'deploy/k8s', `pipeline-${name}.yaml`), 'utf8');
    const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; spec: Record<string, unknown> });
    expect(docs.map((d) => d.kind)).toEqual([
      'Deployment',
      'PodDisruptionBudget',
      ...(WITHOUT_CONSUMER_LAG.has(name) ? [] : ['ScaledObject']),
    ]);
    if (!WITHOUT_CONSUMER_LAG.has(name))
      expect(JSON.stringify(docs[2].spec)).toContain(`kafka_consumer_lag{pipeline=\\"${name}\\"}`);
  }
  const kustomization = parse(readFileSync(join(root, 'deploy/k8s/kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  expect(kustomization.resources.sort()).toEqual(
    Object.keys(k8sFiles())
      .filter((f) => f !== 'kustomization.yaml')
      .sort(),
  );
});

test('the YAML writer quotes what YAML would read as something else', () => {
  const data = {
    yes: 'no',
    n: ['on', '1', '0.5', 'true', '', '${X:-y}', 'a: b', '# c', 'null'],
    nested: { empty: {}, list: [], deep: [{ a: 1, b: [true, null] }] },
    'with space': 'x y',
  };
  expect(parse(toYaml(data))).toEqual(data);
});
