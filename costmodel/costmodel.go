// Package costmodel prices a month of GPU work under each way of paying for it: renting an
// instance that runs whether or not it is busy (persistent), paying only for busy time
// (serverless, scale to zero), and owning the card. It answers the two questions the buying
// guides put before "which provider is cheapest": at this utilization, which way of paying
// wins, and where is the break-even. It is arithmetic on exact decimals, with no I/O;
// docs/economics.md states every formula with the guides' worked examples.
//
// Utilization is the share of the hours a placement exists that its GPUs do work (0–1). A month
// is 730 hours (8,760 ÷ 12), as every price page and guide counts it.
package costmodel

import (
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// HoursPerMonth is the length of the month every monthly figure uses.
const HoursPerMonth = 730

// Usage is how a placement is used over a month.
type Usage struct {
	// Hours is how long the placement must be there to answer, per month: 730 for a service
	// that is always on. Zero means 730.
	Hours float64
	// Utilization is the share of Hours its GPUs are busy, 0–1.
	Utilization float64
	// Wakes is how many times a month a scale-to-zero deployment starts from nothing (each
	// pays a cold start). Zero for a persistent placement.
	Wakes float64
}

func (u Usage) hours() float64 {
	if u.Hours == 0 {
		return HoursPerMonth
	}
	return u.Hours
}

// BusyHours is the hours a month the GPUs do work.
func (u Usage) BusyHours() float64 { return u.hours() * u.Utilization }

func (u Usage) validate() error {
	switch {
	case u.Hours < 0 || u.Hours > 744:
		return fmt.Errorf("hours %g a month: want 0–744", u.Hours)
	case u.Utilization < 0 || u.Utilization > 1:
		return fmt.Errorf("utilization %g: want 0–1", u.Utilization)
	case u.Wakes < 0:
		return fmt.Errorf("wakes %g a month: want 0 or more", u.Wakes)
	}
	return nil
}

// Persistent is the monthly cost of an instance rented at rate per hour (all its GPUs) for the
// usage's hours, busy or idle: $1.39/h around the clock is $1,014.70.
func Persistent(rate decimal.Decimal, u Usage) (decimal.Decimal, error) {
	if err := u.validate(); err != nil {
		return decimal.Zero, err
	}
	return rate.Mul(decimal.NewFromFloat(u.hours())), nil
}

// Serverless is a provider's billing of busy time only.
type Serverless struct {
	// Rate is what an hour of busy time costs, for the same GPUs as the persistent rate it is
	// compared with.
	Rate decimal.Decimal
	// ColdStart is the billed start-up of each wake from zero (loading the image and weights).
	ColdStart time.Duration
	// MinimumBilled is the shortest stretch billed for one wake, however short the work.
	MinimumBilled time.Duration
}

// BilledHours is the hours a month the serverless deployment is billed for: the busy hours,
// at least MinimumBilled per wake, plus a cold start per wake; never more than the hours it is
// up.
func (s Serverless) BilledHours(u Usage) float64 {
	busy := u.BusyHours()
	if least := u.Wakes * s.MinimumBilled.Hours(); busy < least {
		busy = least
	}
	return min(busy+u.Wakes*s.ColdStart.Hours(), u.hours())
}

// Monthly is the serverless cost of a month of the usage: at the persistent rate, $1.39/h
// busy 20% of the month is $202.94.
func (s Serverless) Monthly(u Usage) (decimal.Decimal, error) {
	if err := u.validate(); err != nil {
		return decimal.Zero, err
	}
	return s.Rate.Mul(decimal.NewFromFloat(s.BilledHours(u))), nil
}

// BreakEven is the utilization above which renting persistently at rate is cheaper than the
// serverless billing, with the usage's hours and wakes; 1 when serverless is never dearer
// (its rate no higher and no start-up billed), 0 when it is always dearer (its minimum
// billing alone costs more). A serverless rate 1.4–1.6× the persistent one, as the buying
// guides assume, puts the break-even near 65–70%; Verda's serverless containers cost 1.10×
// its instances, which puts it near 90%.
func (s Serverless) BreakEven(rate decimal.Decimal, u Usage) (float64, error) {
	if err := u.validate(); err != nil {
		return 0, err
	}
	if !s.Rate.IsPositive() || !rate.IsPositive() {
		return 0, errors.New("break-even needs positive rates")
	}
	// Serverless = s.Rate × (U·H + wakes·cold start) while U·H is above the minimum billing;
	// persistent = rate × H. Equal at U = rate/s.Rate − wakes·cold start/H.
	h := u.hours()
	ratio, _ := rate.Div(s.Rate).Float64()
	at := ratio - u.Wakes*s.ColdStart.Hours()/h
	if at < u.Wakes*s.MinimumBilled.Hours()/h {
		// The costs would meet where the minimum billing still holds the serverless cost up:
		// it is dearer than the persistent one at every utilization.
		return 0, nil
	}
	return min(at, 1), nil
}

// Ownership is what owning one GPU costs besides its purchase, and how long it is written off.
type Ownership struct {
	// Purchase is the price of one GPU (with its share of the server), in dollars.
	Purchase decimal.Decimal
	// Watts is the GPU's power at work (its TDP).
	Watts float64
	// ElectricityPerKWh is the price of a kilowatt-hour.
	ElectricityPerKWh decimal.Decimal
	// PUE is the facility's power usage effectiveness: the power drawn per watt of IT load,
	// cooling included (1.0 = no cooling overhead; 1.3 typical).
	PUE float64
	// ColocationPerKWMonth is the rent of a kilowatt of rack power a month (0 when the
	// hardware stands in a room already paid for).
	ColocationPerKWMonth decimal.Decimal
	// OperationsPerMonth is maintenance and operations per GPU a month.
	OperationsPerMonth decimal.Decimal
	// InfrastructurePerMonth is the GPU's share of the network and storage around it a month
	// (switches, uplinks, disks, backup).
	InfrastructurePerMonth decimal.Decimal
	// Years is the write-off period.
	Years float64
	// Residual is the share of Purchase the GPU resells for after Years (0–1).
	Residual float64
}

func (o Ownership) validate() error {
	switch {
	case !o.Purchase.IsPositive():
		return errors.New("ownership: purchase price must be positive")
	case o.Watts < 0:
		return fmt.Errorf("ownership: %g W: want 0 or more", o.Watts)
	case o.PUE != 0 && o.PUE < 1:
		return fmt.Errorf("ownership: PUE %g: want 1 or more", o.PUE)
	case o.Years <= 0:
		return fmt.Errorf("ownership: %g years: want more than 0", o.Years)
	case o.Residual < 0 || o.Residual >= 1:
		return fmt.Errorf("ownership: residual %g: want 0 up to but not 1", o.Residual)
	case o.ElectricityPerKWh.IsNegative() || o.ColocationPerKWMonth.IsNegative() || o.OperationsPerMonth.IsNegative() ||
		o.InfrastructurePerMonth.IsNegative():
		return errors.New("ownership: running costs must not be negative")
	}
	return nil
}

// OwnedMonth is one month of owning a GPU, by cost.
type OwnedMonth struct {
	Depreciation decimal.Decimal // (purchase − residual) spread over the write-off months
	Power        decimal.Decimal // the card's energy while busy
	Cooling      decimal.Decimal // the facility's energy beyond the card's (PUE − 1)
	Colocation   decimal.Decimal // rack power rented by the kilowatt, busy or not
	Operations   decimal.Decimal
	// Infrastructure is the GPU's share of network and storage.
	Infrastructure decimal.Decimal
}

// Running is the month's cost without depreciation: what owning costs once the card is paid.
func (m OwnedMonth) Running() decimal.Decimal {
	return m.Power.Add(m.Cooling).Add(m.Colocation).Add(m.Operations).Add(m.Infrastructure)
}

// Total is the month's cost of ownership.
func (m OwnedMonth) Total() decimal.Decimal { return m.Depreciation.Add(m.Running()) }

// Month is one month of owning the GPU at the usage: energy is drawn while it is busy (an idle
// card's draw, a tenth or so of its TDP, is not counted); depreciation, colocation, operations
// and infrastructure are paid whatever it does.
func (o Ownership) Month(u Usage) (OwnedMonth, error) {
	if err := o.validate(); err != nil {
		return OwnedMonth{}, err
	}
	if err := u.validate(); err != nil {
		return OwnedMonth{}, err
	}
	kw := decimal.NewFromFloat(o.Watts / 1000)
	busyKWh := kw.Mul(decimal.NewFromFloat(u.BusyHours()))
	pue := o.PUE
	if pue == 0 {
		pue = 1
	}
	power := busyKWh.Mul(o.ElectricityPerKWh)
	return OwnedMonth{
		Depreciation:   o.Purchase.Mul(decimal.NewFromFloat(1 - o.Residual)).Div(decimal.NewFromFloat(o.Years * 12)),
		Power:          power,
		Cooling:        power.Mul(decimal.NewFromFloat(pue - 1)),
		Colocation:     kw.Mul(o.ColocationPerKWMonth),
		Operations:     o.OperationsPerMonth,
		Infrastructure: o.InfrastructurePerMonth,
	}, nil
}

// EffectiveHourly is what an hour of the GPU's work costs its owner over the write-off period
// at the usage: the month's total over its busy hours. An H100 bought for $25,000, written off
// over 3 years, busy around the clock at 700 W and $0.10/kWh with cooling of $0.02/h and
// $7.30 a month ($0.01/h) of maintenance costs $1.05 an hour.
func (o Ownership) EffectiveHourly(u Usage) (decimal.Decimal, error) {
	m, err := o.Month(u)
	if err != nil {
		return decimal.Zero, err
	}
	busy := u.BusyHours()
	if busy == 0 {
		return decimal.Zero, errors.New("ownership: no busy hours to spread the cost over")
	}
	return m.Total().Div(decimal.NewFromFloat(busy)), nil
}

// BreakEven is when buying the GPU has paid for itself against renting one at rent per busy
// hour: the busy hours and the months, at the usage, after which the rent saved exceeds the
// purchase and the running costs. ok is false when owning never pays within the write-off
// period: the rent saved does not cover the running costs, or the purchase is paid back only
// after Years. With no running costs, $25,000 against $3.15/h is 7,937 busy hours: 10.9
// months around the clock, 18.1 at 60%. The purchase is paid back whole: the residual value
// is left out here, as a card sold before it has paid for itself is not the plan.
func (o Ownership) BreakEven(rent decimal.Decimal, u Usage) (hours, months float64, ok bool, err error) {
	m, err := o.Month(u)
	if err != nil {
		return 0, 0, false, err
	}
	busy := u.BusyHours()
	saved := rent.Mul(decimal.NewFromFloat(busy)).Sub(m.Running()) // rent avoided less running cost, a month
	if busy == 0 || !saved.IsPositive() {
		return 0, 0, false, nil
	}
	months, _ = o.Purchase.Div(saved).Float64()
	return months * busy, months, months <= o.Years*12, nil
}
