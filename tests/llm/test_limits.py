"""The adaptive limiter: halves on throttling, grows back, wakes waiters in order."""

import asyncio

from assay.llm.limits import AdaptiveLimiter


def test_limiter_caps_in_flight_halves_on_429_and_grows_back():
    async def scenario():
        limiter = AdaptiveLimiter(4)
        peak = 0
        order = []

        async def call(index, throttled):
            nonlocal peak
            await limiter.acquire()
            peak = max(peak, limiter.in_flight)
            order.append(index)
            await asyncio.sleep(0.01)
            await limiter.release(throttled=throttled)

        await asyncio.gather(*(call(i, False) for i in range(12)))
        assert peak == 4 and order == list(range(12))
        await limiter.acquire()
        await limiter.release(throttled=True)
        assert limiter.limit == 2
        for _ in range(20):
            await limiter.acquire()
            await limiter.release(throttled=False)
        assert limiter.limit == 4

    asyncio.run(scenario())


def test_a_cancelled_waiter_gives_its_slot_back():
    async def scenario():
        limiter = AdaptiveLimiter(1)
        await limiter.acquire()
        waiting = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await limiter.release(throttled=False)
        assert limiter.in_flight == 0
        await asyncio.wait_for(limiter.acquire(), 1)

    asyncio.run(scenario())
