// SPDX-License-Identifier: Apache-2.0
// Out-of-line anchor of IODeviceTy.
#include "offloadio/io/IODevice.h"

using namespace offloadio;

IODeviceTy::~IODeviceTy() = default;
