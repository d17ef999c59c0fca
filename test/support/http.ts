// A small JSON client for the API under test (real HTTP): bearer token, JSON body, parsed answer.
export interface JsonResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test responses are checked field by field
  headers: Headers;
}

export type JsonClient = (
  method: string,
  path: string,
  token?: string | null,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<JsonResponse>;

export function client(base: string): JsonClient {
  return async function call(method, path, token = null, body, headers = {}) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}
