// A POST whose body is written in the chunks given (chunked unless the headers declare a length), on a
// connection of its own, ended or not: the answer to a request not ended can only come from a server
// that decided before the body was complete (size limits refused before the body is read).
import { request } from 'node:http';

export function streamedPost(url: string, headers: Record<string, string>, chunks: (string | Buffer)[], o: { end?: boolean } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    // A connection of its own: a kept-alive one the server is closing would reset this request.
    const req = request(url, { method: 'POST', agent: false, headers });
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text });
        req.destroy();
      });
    });
    // The server may reset the connection once it has answered; that is not a failure.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.flushHeaders();
    for (const c of chunks) req.write(c);
    if (o.end) req.end();
  });
}
