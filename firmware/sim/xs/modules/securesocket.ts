// `securesocket` (modules/crypt/securesocket, documentation/network/securesocket.md): a Socket whose
// bytes go through TLS, with `secure: {certificate (DER CA), protocolVersion, ...}`. The emulation
// hands TLS to the host (Node's TLS, the CA given) and keeps the socket protocol: the handshake's
// cost in XS (about 10 KB chunk heap, 6 KB slots, seconds of compute on a board) is not modelled.
import { Socket, type SocketDictionary } from './socket.ts';

export default class SecureSocket extends Socket {
  constructor(dictionary: SocketDictionary) {
    super({ ...dictionary, secure: dictionary.secure ?? {} });
  }
}
