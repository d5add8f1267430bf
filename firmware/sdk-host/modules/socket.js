/*
 * The SDK's socket module (modules/network/socket: socket.js and lin/modSocket.c, unchanged) with one
 * difference: a Listener binds the address its dictionary names. On lwIP the SDK's Listener does
 * (socket/lwip/modSocket.c); the Linux one binds every address and ignores `address`
 * (socket/lin/modSocket.c xs_listener). A board has one listener per interface, each on its own
 * address (hal/http-server.ts), so the address is handed to the network shim (natives/host_net_shim.c)
 * just before the SDK's constructor binds.
 */
import {Socket, Listener as SdkListener} from "sdk/socket";

function listenOn(address) @ "xs_fw_host_listen_on";

export class Listener extends SdkListener {
	constructor(dictionary) {
		listenOn(dictionary?.address ?? "");
		super(dictionary);
	}
}

export {Socket};
export default Object.freeze({Socket, Listener});
