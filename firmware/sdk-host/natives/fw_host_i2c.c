/*
 * The I2C bus of a virtual chip, under the SDK's SSD1306 driver (modules/drivers/ssd1306/modSsd1306.c,
 * unchanged): the modI2C interface it is written against (pins/i2c/esp32/modI2C.c on the chip, over
 * ESP-IDF's i2c_master). The bytes go to the chip's Node side, where the panel's controller decodes
 * them (its commands and GDDRAM). GPIO: the driver's reset and data/command pins are for SPI panels;
 * on I2C they are never driven, so the pins do nothing here.
 */
#include "fw_host.h"
#include "modI2C.h"
#include "modGPIO.h"
#include <string.h>

void modI2CInit(modI2CConfiguration config)
{
}

void modI2CUninit(modI2CConfiguration config)
{
}

uint8_t modI2CRead(modI2CConfiguration config, uint8_t *buffer, uint16_t length, uint8_t sendStop)
{
	fwOut out = {0};
	fwIn in;
	uint32_t n;
	fwOutInt(&out, config->address);
	fwOutInt(&out, length);
	if (fwCall(NULL, FW_CALL_I2C_READ, &out, &in))
		return 1;
	int32_t error = fwInInt(&in);
	const uint8_t *bytes = fwInBytes(&in, &n);
	if (error)
		return (uint8_t)error;
	memcpy(buffer, bytes, (n < length) ? n : length);
	return 0;
}

uint8_t modI2CWrite(modI2CConfiguration config, const uint8_t *buffer, uint16_t length, uint8_t sendStop)
{
	fwOut out = {0};
	fwIn in;
	fwOutInt(&out, config->address);
	fwOutBytes(&out, buffer, length);
	fwOutBool(&out, sendStop);
	if (fwCall(NULL, FW_CALL_I2C_WRITE, &out, &in))
		return 1;
	return (uint8_t)fwInInt(&in);
}

int modGPIOInit(modGPIOConfiguration config, const char *port, uint8_t pin, uint32_t mode)
{
	config->port = port;
	config->pin = pin;
	return 0;
}

void modGPIOUninit(modGPIOConfiguration config)
{
}

void modGPIOWrite(modGPIOConfiguration config, uint8_t value)
{
}
