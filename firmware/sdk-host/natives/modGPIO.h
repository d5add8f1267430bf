/*
 * The modGPIO interface the SDK's SSD1306 driver includes (pins/digital/esp32/modGPIO.h on the chip);
 * its pins are driven only for SPI panels (fw_host_i2c.c).
 */
#ifndef __MODGPIO_H__
#define __MODGPIO_H__

#include <stdint.h>

typedef struct {
	const char *port;
	int pin;
} modGPIOConfigurationRecord;
typedef modGPIOConfigurationRecord *modGPIOConfiguration;

#define kModGPIOInput 0
#define kModGPIOOutput 8

int modGPIOInit(modGPIOConfiguration config, const char *port, uint8_t pin, uint32_t mode);
void modGPIOUninit(modGPIOConfiguration config);
void modGPIOWrite(modGPIOConfiguration config, uint8_t value);

#endif
