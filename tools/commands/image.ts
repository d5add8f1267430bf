// `fleet image`: build and inspect ESP-IDF app images and the partition table (DESIGN.md section 7).
//   fleet image build --version 2026.03.01 -o fw.bin   an app image carrying the firmware built for virtual boards
//   fleet image info <file> [--json]                    validates and describes any ESP32 app image
//   fleet image partitions -o partitions.bin           firmware/partitions.csv in ESP-IDF's binary form
//   fleet image sign | verify | key generate           Secure Boot v2 signatures (./image-signing.ts)
// `info` exits 1 when the bootloader would refuse the image; it also lists the signature blocks.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { secureVersionNumber } from '../cli/number-options.ts';
import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { chipByName } from '../../firmware/image/chips.ts';
import { describeImage, formatImageDescription } from '../../firmware/image/describe.ts';
import { readFileArgument } from '../../cloud/file-errors.ts';
import { parsePartitionCsv } from '../../firmware/image/partition-csv.ts';
import { compilePartitionTable, PARTITION_TABLE_OFFSET, subtypeName, typeName } from '../../firmware/image/partition-table.ts';
import { buildVirtualAppImage, DEFAULT_PROJECT_NAME, VERSION_PATTERN } from '../../firmware/image/virtual-payload.ts';
import { imageSigningCommands } from './image-signing.ts';
import type { CommandContext } from './context.ts';

function version(value: string): string {
  if (!VERSION_PATTERN.test(value)) throw new InvalidArgumentError(`must be YYYY.MM.bb: ${value}`);
  return value;
}

function chip(value: string): string {
  try {
    return chipByName(value).name;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function product(value: string): string {
  if (!/^0x[0-9a-fA-F]{8}$/.test(value)) throw new InvalidArgumentError(`must be 0x and 8 hexadecimal digits: ${value}`);
  return value;
}

function flashSize(value: string): number {
  const m = /^(\d+)MB$/.exec(value);
  if (!m) throw new InvalidArgumentError(`must be a size in MB such as 8MB: ${value}`);
  return Number(m[1]) * 1024 * 1024;
}

export function imageCommand(program: Command, { setExit }: CommandContext): void {
  const image = program.command('image').description('Build and inspect ESP-IDF app images and the partition table');

  image
    .command('build')
    .description("Build an app image of a virtual board's firmware: esp_app_desc_t with the version, the Moddable SDK's host build in a data segment")
    .requiredOption('--version <YYYY.MM.bb>', 'the version written into the app descriptor', version)
    .requiredOption('-o, --output <file>', 'where to write the image')
    .option('--chip <name>', 'target chip', chip, 'esp32s3')
    .option('--project <name>', 'esp_app_desc_t project_name', DEFAULT_PROJECT_NAME)
    .addOption(new Option('--role <role>', 'the build: a controller or a client').choices(['controller', 'client']).default('controller'))
    .addOption(new Option('--build <kind>', 'production or debug (the fault command, 30 min provisioning)').choices(['production', 'debug']).default('production'))
    .option('--class <hardware-class>', 'the hardware class built in (config hardware_class)', 'ctl-s3')
    // Not `<0x...>`: commander takes a placeholder ending in "..." for a list, and the build's config got ["0x…"].
    .option('--product <hex>', 'the product id built in (config product_hex: 0x and 8 hexadecimal digits)', product, '0x00c0ffee')
    .option('--firmware <file>', 'a built firmware (mc.so) instead of building one from firmware/src')
    .option('--secure-version <n>', 'esp_app_desc_t secure_version: the anti-rollback version (0 to 16, the eFuse SECURE_VERSION field)', secureVersionNumber, 0)
    .action(async (o: { version: string; output: string; chip: string; project: string; role: 'controller' | 'client'; build: 'production' | 'debug'; class: string; product: string; firmware?: string; secureVersion: number }) => {
      const chip = chipByName(o.chip);
      let firmware: Uint8Array;
      if (o.firmware) firmware = new Uint8Array(readFileArgument(o.firmware));
      else {
        process.stderr.write(`image: building the ${o.build} ${o.role} firmware with the Moddable SDK for the host (the first build takes a few minutes)…\n`);
        const { firmwareOf } = await import('../../firmware/sdk-host/firmware-image.ts');
        firmware = await firmwareOf({ build: o.build, role: o.role, hardwareClass: o.class, productHex: o.product, ethernet: o.role === 'controller' });
      }
      const bytes = buildVirtualAppImage({ chip, version: o.version, firmware, projectName: o.project, secureVersion: o.secureVersion });
      writeFileSync(o.output, bytes);
      const d = describeImage(bytes);
      process.stdout.write(`${o.output}: ${d.chip} app image ${o.version} (${o.project}${o.secureVersion ? `, secure_version ${o.secureVersion}` : ''}), ${bytes.length} bytes, sha256 ${d.fileSha256}\n`);
    });

  image
    .command('info')
    .description('Validate and describe an ESP32 app image (ours, ESP-IDF or Moddable SDK builds); exit 1 if the bootloader would refuse it')
    .argument('<file>')
    .option('--json', 'print the description as JSON')
    .action((file: string, o: { json?: boolean }) => {
      const d = describeImage(new Uint8Array(readFileArgument(file)));
      process.stdout.write(o.json ? JSON.stringify(d, null, 2) + '\n' : formatImageDescription(d, basename(file)));
      if (!d.valid) setExit(1);
    });

  image
    .command('partitions')
    .description(`Compile a partition table CSV to ESP-IDF's binary format (flash it at 0x${PARTITION_TABLE_OFFSET.toString(16)})`)
    .option('--csv <file>', 'the table (default: firmware/partitions.csv)')
    .option('--flash-size <size>', 'flash size the table must fit', flashSize, 8 * 1024 * 1024)
    .requiredOption('-o, --output <file>', 'where to write the binary table')
    .action(async (o: { csv?: string; flashSize: number; output: string }) => {
      const csvPath = o.csv ?? (await import('../../firmware/image/product-partitions.ts')).PARTITIONS_CSV;
      const entries = parsePartitionCsv(readFileArgument(csvPath).toString('utf8'), csvPath);
      writeFileSync(o.output, compilePartitionTable(entries, o.flashSize));
      for (const p of entries) process.stdout.write(`${p.name.padEnd(16)} ${typeName(p.type).padEnd(5)} ${subtypeName(p.type, p.subtype).padEnd(9)} 0x${p.offset.toString(16).padStart(6, '0')} 0x${p.size.toString(16).padStart(6, '0')}\n`);
    });

  imageSigningCommands(image, setExit);
}
