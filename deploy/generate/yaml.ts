// A small YAML writer for the generated manifests (plain data: objects, arrays, strings, numbers,
// booleans). Strings that YAML could read as something else are written double-quoted (JSON quoting
// is valid YAML), so every value reads back as written.
export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

const PLAIN = /^[A-Za-z_/][A-Za-z0-9_./-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|y|n|null|~)$/i;

function scalar(v: string | number | boolean | null): string {
  if (v === null) return 'null';
  if (typeof v !== 'string') return String(v);
  return PLAIN.test(v) && !RESERVED.test(v) ? v : JSON.stringify(v);
}

function isEmpty(v: Yaml): boolean {
  return (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0);
}

function lines(v: Yaml, indent: string): string[] {
  if (Array.isArray(v)) {
    return v.flatMap((item) => {
      if (typeof item === 'object' && item !== null && !isEmpty(item)) {
        const [first, ...rest] = lines(item, `${indent}  `);
        return [`${indent}- ${first.trimStart()}`, ...rest];
      }
      return [`${indent}- ${isEmpty(item) ? (Array.isArray(item) ? '[]' : '{}') : scalar(item as string)}`];
    });
  }
  if (typeof v === 'object' && v !== null) {
    return Object.entries(v).flatMap(([key, value]) => {
      const k = scalar(key);
      if (typeof value === 'object' && value !== null && !isEmpty(value))
        return [`${indent}${k}:`, ...lines(value, Array.isArray(value) ? indent : `${indent}  `)];
      if (typeof value === 'string' && value.includes('\n'))
        return [
          `${indent}${k}: |`,
          ...value
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => (l ? `${indent}  ${l}` : '')),
        ];
      return [`${indent}${k}: ${isEmpty(value) ? (Array.isArray(value) ? '[]' : '{}') : scalar(value as string)}`];
    });
  }
  return [`${indent}${scalar(v)}`];
}

export function toYaml(v: Yaml): string {
  return `${lines(v, '').join('\n')}\n`;
}

/** Several documents in one file, each after `---`. */
export function toYamlDocuments(docs: Yaml[]): string {
  return docs.map((d) => `---\n${toYaml(d)}`).join('');
}
