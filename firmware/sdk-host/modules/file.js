/*
 * The SDK's `file` on Linux (files/file/file.js and lin/modFile.c, unchanged) on the board's flash
 * folder (config.file.root), with writes that take any buffer, as on the chip (modules/buffers.js).
 * Before each operation that changes the flash it tells the power-cut hook (natives/fw_host_flash.c),
 * which answers at once unless a power-cut trial watches the board: then the chip's Node side may cut
 * the power before the operation, or let only part of a write reach the flash first.
 */
import {File as SdkFile, Iterator, System, Directory as SdkDirectory} from "sdk/file";
import {exactBuffer} from "fw/buffers";

function flashOp(op, path, length) @ "xs_fw_host_flash_op";

export class File extends SdkFile {
	constructor(path, write) {
		if (write)
			flashOp("create", path, 0);
		super(path, write);
	}
	write(...items) {
		items = items.map(exactBuffer);
		for (let i = 0; i < items.length; i++) {
			const item = items[i];
			const keep = flashOp("write", "", ("string" === typeof item) ? item.length : item.byteLength);
			if (keep >= 0) {
				super.write(item.slice(0, keep));
				flashOp("cut", "", 0);
			}
		}
		return super.write(...items);
	}
	static delete(path) {
		flashOp("delete", path, 0);
		return super.delete(path);
	}
	static rename(path, name) {
		flashOp("rename", path, 0);
		return super.rename(path, name);
	}
}

export class Directory {
	static create(path) {
		flashOp("mkdir", path, 0);
		return SdkDirectory.create(path);
	}
	static delete(path) {
		flashOp("rmdir", path, 0);
		return SdkDirectory.delete(path);
	}
}

export {Iterator, System};
export default Object.freeze({File, Iterator, System, Directory});
