// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Teardown.h"

using namespace offloadio;

void TeardownTy::add(Error Err) {
  // Joined errors arrive one by one: each "shut down" answer is taken out,
  // the others are kept in their order.
  Error Rest = llvm::handleErrors(
      std::move(Err), [&](std::unique_ptr<OffloadErrorTy> E) -> Error {
        if (E->getCode() != ErrorCode::DriverShutDown)
          return Error(std::move(E));
        if (!DriverGone)
          DriverAnswer =
              llvm::joinErrors(std::move(DriverAnswer), Error(std::move(E)));
        DriverGone = true;
        return Error::success();
      });
  Result = llvm::joinErrors(std::move(Result), std::move(Rest));
}

void TeardownTy::addDriverAnswerOnly(Error Err) {
  TeardownTy Step;
  Step.add(std::move(Err));
  if (Step.driverGone())
    add(Step.takeForEnclosing());
}

Error TeardownTy::takeForEnclosing() {
  return llvm::joinErrors(std::move(Result), std::move(DriverAnswer));
}
