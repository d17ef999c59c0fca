// Requests to the API under test over real HTTP: a bearer token and a JSON body when given.
// `requester` answers with the fetch Response; `client` with the status and the parsed JSON body.
export type Requester = (
  method: string,
  path: string,
  token?: string | null,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Response>;

export interface JsonResponse {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test responses are checked field by field
  headers: Headers;
}

export type JsonClient = (...args: Parameters<Requester>) => Promise<JsonResponse>;

export function requester(base: string): Requester {
  return (method, path, token = null, body, headers = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
}

export function client(base: string): JsonClient {
  const send = requester(base);
  return async (...args) => {
    const res = await send(...args);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
}
