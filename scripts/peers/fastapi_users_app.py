"""A minimal fastapi-users service, a benchmark peer of Gatehouse.

It is the SQLAlchemy + JWT strategy + Bearer transport set-up of the fastapi-users documentation
("Full example", SQLAlchemy), in one file, with nothing tuned: users in SQLite through aiosqlite,
passwords through the library's PasswordHelper (pwdlib, Argon2id with argon2-cffi's defaults),
stateless HS256 JWTs of one hour. Run by scripts/peers/fastapi-users.sh:

    uvicorn fastapi_users_app:app           the service (configured by the environment below)
    python fastapi_users_app.py seed USERS  creates the tables and the benchmark users

Environment:
    FASTAPI_USERS_DATABASE_URL  e.g. sqlite+aiosqlite:////tmp/x/users.sqlite
    FASTAPI_USERS_SECRET        JWT signing secret (HS256)
    BENCH_SEED_JOBS             seed: processes hashing passwords (default: all cores)
    BENCH_SEED_CACHE_DIR        seed: where derived hashes are kept between runs ('' for nowhere)
"""
import os
import sys
import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi_users import BaseUserManager, FastAPIUsers, UUIDIDMixin, models, schemas
from fastapi_users.authentication import AuthenticationBackend, BearerTransport, JWTStrategy
from fastapi_users.db import SQLAlchemyBaseUserTableUUID, SQLAlchemyUserDatabase
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

DATABASE_URL = os.environ.get("FASTAPI_USERS_DATABASE_URL", "sqlite+aiosqlite:///./fastapi-users.sqlite")
SECRET = os.environ.get("FASTAPI_USERS_SECRET", "SECRET")
TOKEN_LIFETIME_SECONDS = 3600


# --- db.py -----------------------------------------------------------------------------------
class Base(DeclarativeBase):
    pass


class User(SQLAlchemyBaseUserTableUUID, Base):
    pass


engine = create_async_engine(DATABASE_URL)
async_session_maker = async_sessionmaker(engine, expire_on_commit=False)


async def create_db_and_tables():
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)


async def get_async_session() -> AsyncGenerator[AsyncSession, None]:
    async with async_session_maker() as session:
        yield session


async def get_user_db(session: AsyncSession = Depends(get_async_session)):
    yield SQLAlchemyUserDatabase(session, User)


# --- schemas.py ------------------------------------------------------------------------------
class UserRead(schemas.BaseUser[uuid.UUID]):
    pass


class UserCreate(schemas.BaseUserCreate):
    pass


class UserUpdate(schemas.BaseUserUpdate):
    pass


# --- users.py --------------------------------------------------------------------------------
class UserManager(UUIDIDMixin, BaseUserManager[User, uuid.UUID]):
    reset_password_token_secret = SECRET
    verification_token_secret = SECRET
    # The documentation's example prints on each hook; those lines are left out so that the
    # benchmark measures the library, not stdout.


async def get_user_manager(user_db: SQLAlchemyUserDatabase = Depends(get_user_db)):
    yield UserManager(user_db)


bearer_transport = BearerTransport(tokenUrl="auth/jwt/login")


def get_jwt_strategy() -> JWTStrategy[models.UP, models.ID]:
    return JWTStrategy(secret=SECRET, lifetime_seconds=TOKEN_LIFETIME_SECONDS)


auth_backend = AuthenticationBackend(name="jwt", transport=bearer_transport, get_strategy=get_jwt_strategy)

fastapi_users = FastAPIUsers[User, uuid.UUID](get_user_manager, [auth_backend])

current_active_user = fastapi_users.current_user(active=True)


# --- app.py ----------------------------------------------------------------------------------
@asynccontextmanager
async def lifespan(app: FastAPI):
    # Idempotent (CREATE TABLE only when missing); the seed step has already made the tables, so
    # the workers starting side by side don't race on it.
    await create_db_and_tables()
    yield


app = FastAPI(lifespan=lifespan)

app.include_router(fastapi_users.get_auth_router(auth_backend), prefix="/auth/jwt", tags=["auth"])
app.include_router(fastapi_users.get_register_router(UserRead, UserCreate), prefix="/auth", tags=["auth"])
app.include_router(fastapi_users.get_reset_password_router(), prefix="/auth", tags=["auth"])
app.include_router(fastapi_users.get_verify_router(UserRead), prefix="/auth", tags=["auth"])
app.include_router(fastapi_users.get_users_router(UserRead, UserUpdate), prefix="/users", tags=["users"])


@app.get("/authenticated-route")
async def authenticated_route(user: User = Depends(current_active_user)):
    return {"message": f"Hello {user.email}!"}


# --- benchmark seeding (not part of the documentation's example) -----------------------------
def _hash(i: int) -> tuple[int, str]:
    from fastapi_users.password import PasswordHelper

    return i, PasswordHelper().hash(f"bench password {i} seed")


def _hash_prefix() -> str:
    """'$argon2id$v=19$m=65536,t=3,p=4$': what a hash made now starts with, to key the cache."""
    from fastapi_users.password import PasswordHelper

    return PasswordHelper().hash("probe").rsplit("$", 2)[0] + "$"


def _hashes(users: int) -> dict[int, str]:
    """Argon2 hashes of users 0..users-1, from the cache where present, derived otherwise.

    Deriving is the costly part (m=64 MiB, t=3 per password), hence several processes and a cache
    keyed by the hash parameters, appended to as hashes arrive so an interrupted run keeps its work.
    """
    import multiprocessing
    import re
    import time

    prefix = _hash_prefix()
    cache_dir = os.environ.get("BENCH_SEED_CACHE_DIR", "")
    cache_path = ""
    if cache_dir:
        params = prefix.strip("$").replace("$", "-").replace(",", "-").replace("=", "")
        cache_path = os.path.join(cache_dir, f"fastapi-users-{params}.tsv")
    hashes: dict[int, str] = {}
    if cache_path and os.path.exists(cache_path):
        complete = re.compile(r"(\d+)\t(" + re.escape(prefix) + r"[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+)\n")
        with open(cache_path) as cache:
            for line in cache:
                # Only whole lines with these parameters count: a run cut short may leave half a line.
                match = complete.fullmatch(line)
                if match and int(match[1]) < users:
                    hashes[int(match[1])] = match[2]
        print(f"fastapi-users seed: {len(hashes)} of {users} password hashes from the cache {cache_path}", file=sys.stderr)
    missing = [i for i in range(users) if i not in hashes]
    if not missing:
        return hashes
    jobs = int(os.environ.get("BENCH_SEED_JOBS") or os.cpu_count() or 1)
    print(f"fastapi-users seed: hashing {len(missing)} passwords ({prefix}) on {jobs} processes", file=sys.stderr)
    cache = None
    if cache_path:
        os.makedirs(cache_dir, exist_ok=True)
        cache = open(cache_path, "a")
    started = last = time.monotonic()
    with multiprocessing.Pool(jobs) as pool:
        for done, (i, value) in enumerate(pool.imap_unordered(_hash, missing, chunksize=8), 1):
            hashes[i] = value
            if cache:
                cache.write(f"{i}\t{value}\n")
                cache.flush()
            now = time.monotonic()
            if now - last >= 5 or done == len(missing):
                last = now
                rate = done / max(now - started, 1e-9)
                print(f"fastapi-users seed:   {done}/{len(missing)} hashes, {rate:.1f}/s, "
                      f"{(len(missing) - done) / rate:.0f} s left", file=sys.stderr, flush=True)
    if cache:
        cache.close()
    return hashes


async def _seed(users: int) -> None:
    from sqlalchemy import func, insert, select

    hashes = _hashes(users)
    await create_db_and_tables()
    rows = [
        # Only what registration would set; is_active, is_superuser and is_verified keep the
        # model's defaults (True, False, False), and login does not ask for verification.
        {"id": uuid.uuid4(), "email": f"bench-seed-{i}@example.com", "hashed_password": hashes[i]}
        for i in range(users)
    ]
    async with engine.begin() as conn:
        for start in range(0, len(rows), 5000):
            await conn.execute(insert(User), rows[start:start + 5000])
        count = (await conn.execute(select(func.count()).select_from(User))).scalar_one()
    await engine.dispose()
    print(f"fastapi-users seed: {count} users in the database", file=sys.stderr)


if __name__ == "__main__":
    import asyncio

    if len(sys.argv) != 3 or sys.argv[1] != "seed":
        sys.exit("usage: python fastapi_users_app.py seed USERS")
    asyncio.run(_seed(int(sys.argv[2])))
