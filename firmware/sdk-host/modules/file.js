/*
 * The SDK's `file` on Linux (files/file/file.js and lin/modFile.c, unchanged) on the board's flash
 * folder (config.file.root), with writes that take any buffer, as on the chip (modules/buffers.js).
 */
import {File as SdkFile, Iterator, System, Directory} from "sdk/file";
import {exactBuffer} from "fw/buffers";

export class File extends SdkFile {
	write(...items) {
		return super.write(...items.map(exactBuffer));
	}
}

export {Iterator, System, Directory};
export default Object.freeze({File, Iterator, System, Directory});
