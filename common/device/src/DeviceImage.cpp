// SPDX-License-Identifier: Apache-2.0
// Out-of-line anchor of DeviceImageTy.
#include "offloadio/DeviceImage.h"

using namespace offloadio;

DeviceImageTy::~DeviceImageTy() = default;
