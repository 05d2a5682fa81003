/**
 * A request whose FormData body is encoded to bytes up front, with its multipart content type; other requests are
 * returned as they are. Node 24's fetch streams a FormData body through a byte stream that it can still write to
 * after closing it, which surfaces as an unhandled "ReadableStream is already closed" rejection (fatal to a
 * process) once the server has answered. Our multipart uploads are small (one audio file, a few fields), so
 * encoding them first costs nothing and sends the same bytes.
 */
export async function withEncodedForm(init: RequestInit): Promise<RequestInit> {
  if (!(init.body instanceof FormData)) return init;
  const encoded = new Response(init.body);
  const headers = new Headers(init.headers);
  headers.set('content-type', encoded.headers.get('content-type') ?? 'multipart/form-data');
  return { ...init, headers, body: new Uint8Array(await encoded.arrayBuffer()) };
}
