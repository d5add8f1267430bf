/*
 * The app slots, for hal/system.ts (what Moddable's `ota` module, build/devices/esp32/modules/ota,
 * does not offer).
 *
 * ESP-IDF app_update (esp_ota_ops.h): esp_ota_get_running_partition,
 * esp_ota_get_last_invalid_partition, esp_ota_get_partition_description (the slot's esp_app_desc_t:
 * version and project name), esp_ota_get_state_partition (esp_ota_img_states_t) and
 * esp_ota_mark_app_valid_cancel_rollback. With CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE a new image
 * boots in ESP_OTA_IMG_PENDING_VERIFY; the bootloader rolls it back unless it is marked valid.
 * A slot is returned as [label, version, project name, state]: an array, so no property name has
 * to exist as an XS symbol.
 */
#include "xsmc.h"
#include "xsHost.h"
#include "esp_ota_ops.h"

static const char *stateName(const esp_partition_t *partition)
{
	esp_ota_img_states_t state;

	if (ESP_OK != esp_ota_get_state_partition(partition, &state))
		return "undefined";		/* a factory slot, or no otadata entry for it */
	switch (state) {
		case ESP_OTA_IMG_NEW: return "new";
		case ESP_OTA_IMG_PENDING_VERIFY: return "pending_verify";
		case ESP_OTA_IMG_VALID: return "valid";
		case ESP_OTA_IMG_INVALID: return "invalid";
		case ESP_OTA_IMG_ABORTED: return "aborted";
		default: return "undefined";
	}
}

static void describeSlot(xsMachine *the, const esp_partition_t *partition)
{
	esp_app_desc_t description;
	char version[sizeof(description.version) + 1] = {0};
	char project[sizeof(description.project_name) + 1] = {0};

	if (ESP_OK == esp_ota_get_partition_description(partition, &description)) {
		c_memcpy(version, description.version, sizeof(description.version));
		c_memcpy(project, description.project_name, sizeof(description.project_name));
	}
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 4);
	xsmcSetString(xsVar(0), (char *)partition->label);
	xsmcSetIndex(xsResult, 0, xsVar(0));
	xsmcSetString(xsVar(0), version);
	xsmcSetIndex(xsResult, 1, xsVar(0));
	xsmcSetString(xsVar(0), project);
	xsmcSetIndex(xsResult, 2, xsVar(0));
	xsmcSetString(xsVar(0), (char *)stateName(partition));
	xsmcSetIndex(xsResult, 3, xsVar(0));
}

void xs_fw_ota_running_app(xsMachine *the)
{
	const esp_partition_t *running = esp_ota_get_running_partition();

	if (!running)
		xsUnknownError("no running partition");
	describeSlot(the, running);
}

void xs_fw_ota_last_invalid_app(xsMachine *the)
{
	const esp_partition_t *invalid = esp_ota_get_last_invalid_partition();

	if (invalid)
		describeSlot(the, invalid);		/* else undefined */
}

void xs_fw_ota_mark_valid(xsMachine *the)
{
	esp_ota_img_states_t state;
	const esp_partition_t *running = esp_ota_get_running_partition();

	if (!running || (ESP_OK != esp_ota_get_state_partition(running, &state)) || (ESP_OTA_IMG_PENDING_VERIFY != state)) {
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	if (ESP_OK != esp_ota_mark_app_valid_cancel_rollback())
		xsUnknownError("esp_ota_mark_app_valid_cancel_rollback failed");
	xsmcSetBoolean(xsResult, 1);
}
